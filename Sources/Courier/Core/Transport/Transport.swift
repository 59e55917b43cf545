import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the client needs from the network: send a request and return the whole response, or
/// return the response head as soon as it arrives with the body still streaming.
///
/// ``URLSessionTransport`` is the production conformance; `StubTransport` (module CourierTesting)
/// is the test seam. A transport returns every HTTP status as a value — mapping statuses to errors
/// is the client's job — and throws only when no response was received (`URLError`,
/// `CancellationError`).
///
/// Besides the response, a transport reports what the call's observers need through the call's
/// ``TransportReporter``, which it reads (``TransportReporter/current``) on the sending task when a
/// request starts: byte progress (uploads' and downloads' ``TransferProgress``), phase timings
/// (``RequestContext/taskTimings``, metrics) and the moment the request left
/// (``RequestOptions/onStart``). It is `nil` outside a pipeline's send; a transport that cannot
/// measure something reports nothing for it.
public protocol Transport: Sendable {
    /// Sends `request` and returns the complete response.
    ///
    /// - Throws: `URLError` for network failures (`.cancelled` when the task was cancelled),
    ///   `CancellationError` when cancelled before the request left.
    func send(_ request: URLRequest) async throws -> HTTPResponse

    /// Sends `request` and returns as soon as the response head has arrived: the response's
    /// ``HTTPResponse/body`` is the network stream (``MessageBody/isBuffered`` is `false`), holding
    /// at most about `options.bufferLimit` of them for a slow consumer (pausing the transfer when
    /// the transport can, failing with ``NetworkError/streamBufferOverflow(limit:)`` when it
    /// cannot). Cancelling the consumer, or dropping its iterator, cancels the transfer.
    ///
    /// The default implementation returns ``send(_:)``'s response, its body in memory — correct for
    /// any transport, streaming for none.
    ///
    /// - Throws: As ``send(_:)``, until the head arrived; later failures end the body instead.
    func stream(_ request: URLRequest, options: StreamingOptions) async throws -> HTTPResponse
}

extension Transport {
    /// Returns ``send(_:)``'s response as it is: a body in memory (or the chunks a test stub
    /// scripts) is a body a streamed call reads like any other.
    public func stream(_ request: URLRequest, options: StreamingOptions) async throws -> HTTPResponse {
        try await send(request)
    }
}
