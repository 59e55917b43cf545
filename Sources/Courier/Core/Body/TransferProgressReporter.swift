import Foundation

/// Where a transport reports the bytes a call has sent and received, for transfer progress.
///
/// Set as a task-local for the duration of a transfer; a transport reads ``current`` when it
/// starts a request and calls it from whatever thread its callbacks run on.
package struct TransferProgressReporter: Sendable {
    /// The reporter of the transfer running in the current task, if any.
    @TaskLocal package static var current: TransferProgressReporter?

    private let sent: @Sendable (Int64, Int64?) -> Void
    private let received: @Sendable (Int64, Int64?) -> Void

    /// Creates a reporter from two callbacks: (total bytes so far, expected total when known).
    package init(
        sent: @escaping @Sendable (Int64, Int64?) -> Void = { _, _ in },
        received: @escaping @Sendable (Int64, Int64?) -> Void = { _, _ in }
    ) {
        self.sent = sent
        self.received = received
    }

    /// The request body has sent `totalBytesSent` bytes so far, of `expected` when known.
    package func didSend(_ totalBytesSent: Int64, of expected: Int64?) { sent(totalBytesSent, expected) }

    /// The response body has delivered `totalBytesReceived` bytes so far, of `expected` when known.
    package func didReceive(_ totalBytesReceived: Int64, of expected: Int64?) { received(totalBytesReceived, expected) }
}
