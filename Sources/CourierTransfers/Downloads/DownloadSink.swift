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
/// session of the process waits. So the sink keeps to the producer's thread only while writes are
/// quick (``admitsProducerThread``): one write over ``slowWrite`` or writes adding up to
/// ``writeBudgetPerSecond`` within a second (a disk that got slow, writeback throttling) send the
/// writes to the reader's thread for ``offProducerThread``; the transfer is then held or buffered
/// as for any reader (measured: a disk throttled to 2 MiB/s during a 24 MiB download stalled a GET
/// to another server for 5.9 s when every write stayed on the delegate queue).
final class DownloadSink: Sendable {
    /// A single write this long takes the writes off the producer's thread (20 ms; a 128 KiB write
    /// to the page cache takes about 30 µs).
    static let slowWrite: UInt64 = 20_000_000
    /// Writes adding up to this much within one second take them off the producer's thread (200
    /// ms per second, the budget of `DeliveryHold` too; 1 GiB at loopback speed spends about 140
    /// ms per second writing).
    static let writeBudgetPerSecond: UInt64 = 200_000_000
    /// How long writes stay off the producer's thread after that (1 s), in nanoseconds.
    static let offProducerThread: UInt64 = 1_000_000_000
    private let file: PartialDownloadFile
    /// The representation's length from `Content-Range`/`Content-Length`, when known: a body that
    /// goes past it fails at once.
    private let completeLength: Int64?
    private let batchBytes: Int
    private let keepsPartialOnWriteFailure: Bool
    /// Called with the bytes received so far (written plus batched) after every chunk.
    private let report: @Sendable (Int64) -> Void
    private let batch = Locked(Data())
    /// Monotonic nanoseconds (`DispatchTime`'s uptime; injected in tests).
    private let clock: @Sendable () -> UInt64
    /// The current one-second window, the time written in it, and until when writes stay off the
    /// producer's thread (nanoseconds on `clock`).
    private let timing = Locked((windowStart: UInt64(0), spent: UInt64(0), offUntil: UInt64(0)))

    /// - Parameters:
    ///   - batchBytes: Bytes gathered before one write.
    ///   - keepsPartialOnWriteFailure: Whether a failed write keeps the partial file (resumable).
    ///   - clock: Monotonic time in nanoseconds.
    init(
        file: PartialDownloadFile, completeLength: Int64?, batchBytes: Int,
        keepsPartialOnWriteFailure: Bool, clock: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds },
        report: @escaping @Sendable (Int64) -> Void
    ) {
        self.clock = clock
        self.file = file
        self.completeLength = completeLength
        self.batchBytes = batchBytes
        self.keepsPartialOnWriteFailure = keepsPartialOnWriteFailure
        self.report = report
    }

    /// Adds `chunk` to the batch and writes the batch once it holds `batchBytes`.
    ///
    /// - Throws: ``AttemptFailure/fatal(_:keepsPartial:)`` for bytes past the complete length or a
    ///   failed write.
    func take(_ chunk: Data) throws {
        let received: Int64 = try batch.withLock { batch in
            let received = file.length + Int64(batch.count) + Int64(chunk.count)
            if let completeLength, received > completeLength {
                throw AttemptFailure.fatal(.lengthMismatch(expected: completeLength, received: received), keepsPartial: false)
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

    /// Whether writes may run on the producer's thread now: none was slow lately.
    var admitsProducerThread: Bool {
        let now = clock()
        return timing.withLock { now >= $0.offUntil }
    }

    private func write(_ batch: inout Data) throws(AttemptFailure) {
        guard !batch.isEmpty else { return }
        defer { batch = Data() }
        let start = clock()
        defer { account(start: start, end: clock()) }
        do { try file.append(batch) } catch {
            throw .fatal(.fileSystem(String(describing: error)), keepsPartial: keepsPartialOnWriteFailure)
        }
    }

    /// Adds one write's time to the window; a slow write or a spent budget takes the writes off
    /// the producer's thread.
    private func account(start: UInt64, end: UInt64) {
        let took = end &- start
        timing.withLock { timing in
            if start &- timing.windowStart >= 1_000_000_000 { (timing.windowStart, timing.spent) = (start, 0) }
            timing.spent += took
            if took > Self.slowWrite || timing.spent > Self.writeBudgetPerSecond {
                timing.offUntil = end + Self.offProducerThread
                (timing.windowStart, timing.spent) = (end, 0)
            }
        }
    }
}
