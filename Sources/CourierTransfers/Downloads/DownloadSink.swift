import Courier
import Foundation

/// Takes the chunks of one download attempt's body and writes them to the partial file in
/// batches: on URLSession's delegate queue when the body is pushed there, else on the reader's
/// thread — never on Swift's cooperative pool, since every write blocks its thread.
///
/// Called by one thread at a time (`MessageBody.push(to:admittingProducerThread:)` never calls its
/// sink twice at once, and ``flush()`` runs after the push returned); the lock only makes that
/// hand-over visible.
///
/// On Linux the delegate queue's thread is every URLSession's: while a write blocks it, every
/// session of the process waits. So the sink writes on the producer's thread only while
/// ``DownloadWriteTiming`` admits it (writes of every download of the process quick, and within
/// their budget).
final class DownloadSink: Sendable {
    private let file: PartialDownloadFile
    /// The length the file may reach with this body, when known: the end of a `206`'s part (its
    /// `Content-Range`), else the representation's length (`Content-Length`). A body that goes past
    /// it fails at once.
    private let limit: Int64?
    private let batchBytes: Int
    private let keepsPartialOnWriteFailure: Bool
    /// Called with the bytes received so far (written plus batched) after every chunk.
    private let report: @Sendable (Int64) -> Void
    private let batch = Locked(Data())
    /// How long writes took lately, for every download of the process.
    private let timing: DownloadWriteTiming

    /// - Parameters:
    ///   - batchBytes: Bytes gathered before one write.
    ///   - keepsPartialOnWriteFailure: Whether a failed write keeps the partial file (resumable).
    ///   - timing: Where write times are counted (the process's, but for tests).
    init(
        file: PartialDownloadFile, limit: Int64?, batchBytes: Int,
        keepsPartialOnWriteFailure: Bool, timing: DownloadWriteTiming = .process, report: @escaping @Sendable (Int64) -> Void
    ) {
        self.timing = timing
        self.file = file
        self.limit = limit
        self.batchBytes = batchBytes
        self.keepsPartialOnWriteFailure = keepsPartialOnWriteFailure
        self.report = report
    }

    /// Adds `chunk` to the batch and writes the batch once it holds `batchBytes`.
    ///
    /// - Throws: ``AttemptFailure/fatal(_:keepsPartial:)`` for bytes past the limit or a
    ///   failed write.
    func take(_ chunk: Data) throws {
        let received: Int64 = try batch.withLock { batch in
            let received = file.length + Int64(batch.count) + Int64(chunk.count)
            if let limit, received > limit {
                throw AttemptFailure.fatal(.lengthMismatch(expected: limit, received: received), keepsPartial: false)
            }
            batch.append(chunk)
            if batch.count >= batchBytes { try write(&batch) }
            return received
        }
        report(received)
    }

    /// Writes what is batched.
    ///
    /// - Throws: ``AttemptFailure/fatal(_:keepsPartial:)`` for a failed write.
    func flush() throws {
        try batch.withLock { batch in try write(&batch) }
    }

    /// Whether writes may run on the producer's thread now (``DownloadWriteTiming``).
    var admitsProducerThread: Bool { timing.admitsProducerThread }

    private func write(_ batch: inout Data) throws(AttemptFailure) {
        guard !batch.isEmpty else { return }
        defer { batch = Data() }
        let start = timing.now()
        defer { timing.account(start: start, end: timing.now()) }
        do { try file.append(batch) } catch {
            throw .fatal(.fileSystem(String(describing: error)), keepsPartial: keepsPartialOnWriteFailure)
        }
    }
}
