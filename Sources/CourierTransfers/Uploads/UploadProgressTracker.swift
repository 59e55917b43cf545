import Courier
import Foundation

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
