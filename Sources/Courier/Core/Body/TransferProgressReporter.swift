import Foundation

/// Where a transport reports the bytes a call has sent and received, for transfer progress
/// (``TransferProgress`` of uploads and downloads) — part of the ``Transport`` contract, so a
/// transport of your own reports progress like the built-in ones.
///
/// Courier's pipeline binds it to the sending task for each send of a transfer that wants progress;
/// a transport reads ``current`` on the sending task when it starts a request (before handing work
/// to another queue, where task-locals are not visible) and calls ``didSend(_:of:)`` and
/// ``didReceive(_:of:)`` from whatever thread its callbacks run on.
///
/// ```swift
/// // inside a custom transport's send(_:)
/// let progress = TransferProgressReporter.current
/// progress?.didSend(4096, of: 10_000)      // bytes of the request body sent so far, of the total
/// progress?.didReceive(512, of: nil)       // response body bytes so far; total unknown
/// ```
public struct TransferProgressReporter: Sendable {
    /// The reporter of the transfer the current task is sending; `nil` when nobody asked for
    /// progress or outside a pipeline's send.
    public static var current: TransferProgressReporter? { TransportReporting.current?.progress }

    private let sent: @Sendable (Int64, Int64?) -> Void
    private let received: @Sendable (Int64, Int64?) -> Void

    /// Creates a reporter from two callbacks, each given (total bytes so far, expected total in bytes
    /// when known).
    public init(
        sent: @escaping @Sendable (Int64, Int64?) -> Void = { _, _ in },
        received: @escaping @Sendable (Int64, Int64?) -> Void = { _, _ in }
    ) {
        self.sent = sent
        self.received = received
    }

    /// The request body has sent `totalBytesSent` bytes so far, of `expected` when known.
    public func didSend(_ totalBytesSent: Int64, of expected: Int64?) { sent(totalBytesSent, expected) }

    /// The response body has delivered `totalBytesReceived` bytes so far, of `expected` when known.
    public func didReceive(_ totalBytesReceived: Int64, of expected: Int64?) { received(totalBytesReceived, expected) }
}
