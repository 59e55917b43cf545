import Foundation

/// Where a transport reports the bytes a call has sent and received, for transfer progress
/// (``TransferProgress`` of uploads and downloads): the progress part of ``TransportReporter``,
/// which transports use (this value also carries an upload's own progress callbacks).
package struct TransferProgressReporter: Sendable {
    /// The reporter of the transfer the current task is sending; `nil` when nobody asked for
    /// progress or outside a pipeline's send.
    package static var current: TransferProgressReporter? { TransportReporter.bound?.progress }

    private let sent: @Sendable (Int64, Int64?) -> Void
    private let received: @Sendable (Int64, Int64?) -> Void

    /// Creates a reporter from two callbacks, each given (total bytes so far, expected total in bytes
    /// when known).
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
