import Foundation

/// How far a transfer has come — an upload's request body or a download's file: bytes done and,
/// when known, the total. The one progress type of uploads, downloads and resumable uploads.
///
/// ``completedBytes`` never decreases while ``restarts`` stays the same. When a download's file
/// changed on the server (or the server ignored the range), the data received is discarded and
/// the transfer starts from zero: the next value has ``restarts`` one higher and
/// ``completedBytes`` counting the new attempt from 0 — a progress bar should reset rather than
/// jump back silently.
public struct TransferProgress: Sendable, Hashable {
    /// Bytes transferred so far: request body bytes sent (upload), or bytes of the file received,
    /// including those kept from an earlier attempt (a resumed download starts at its
    /// ``DownloadResumeData/offset``).
    public let completedBytes: Int64
    /// The total in bytes, or `nil` when unknown: a streamed body of unknown length; a download
    /// whose body is chunked without a length or content-coded (gzip, br — the length on the wire
    /// is not the file's). Never guessed.
    public let totalBytes: Int64?
    /// How many times the data transferred was discarded and the transfer started from zero.
    public let restarts: Int

    /// Creates a value.
    public init(completedBytes: Int64, totalBytes: Int64?, restarts: Int = 0) {
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
        self.restarts = restarts
    }

    /// `completedBytes / totalBytes` in `0...1`, or `nil` when the total is unknown (1 for an
    /// empty body).
    public var fractionCompleted: Double? {
        guard let totalBytes else { return nil }
        guard totalBytes > 0 else { return 1 }
        return min(1, max(0, Double(completedBytes) / Double(totalBytes)))
    }
}

/// Turns a transport's raw send reports into the progress an upload publishes: never decreasing
/// (a retry or a redirect sends the body again from byte 0; the published value waits until the
/// new send passes it), never past the total, and ending at the total.
final class UploadProgressTracker: Sendable {
    private struct State {
        var completed: Int64 = 0
        var published = false
        var publishedTotal: Int64?
        var finished = false
    }

    private let state = Locked(State())
    private let continuation: AsyncStream<TransferProgress>.Continuation
    /// The body length when Courier knows it (Data, a file, a form); otherwise what URLSession says.
    private let knownTotal: Int64?

    init(knownTotal: Int64?, continuation: AsyncStream<TransferProgress>.Continuation) {
        self.knownTotal = knownTotal
        self.continuation = continuation
    }

    /// A report from the transport: `sent` bytes of this send, of `expected` (`nil`: unknown).
    func didSend(_ sent: Int64, of expected: Int64?) {
        let total = knownTotal ?? expected.flatMap { $0 > 0 ? $0 : nil }
        let value: TransferProgress? = state.withLock { state in
            guard !state.finished else { return nil }
            let clamped = total.map { min(sent, $0) } ?? sent
            guard clamped > state.completed || !state.published else { return nil }
            state.completed = max(state.completed, clamped)
            state.published = true
            state.publishedTotal = total
            return TransferProgress(completedBytes: state.completed, totalBytes: total)
        }
        if let value { continuation.yield(value) }
    }

    /// The upload succeeded: publish the total (the bytes sent when it is unknown) and finish.
    func finish(sentTotal: Int64?) {
        let last: TransferProgress? = state.withLock { state in
            guard !state.finished else { return nil }
            state.finished = true
            let total = knownTotal ?? sentTotal ?? state.completed
            guard state.completed < total || !state.published || state.publishedTotal != total else { return nil }
            state.completed = total
            return TransferProgress(completedBytes: total, totalBytes: total)
        }
        if let last { continuation.yield(last) }
        continuation.finish()
    }

    /// The upload failed or was cancelled: finish without a final value.
    func fail() {
        state.withLock { $0.finished = true }
        continuation.finish()
    }

    /// A reporter forwarding sends to this tracker.
    var reporter: TransferProgressReporter {
        TransferProgressReporter(sent: { [self] sent, expected in didSend(sent, of: expected) })
    }
}
