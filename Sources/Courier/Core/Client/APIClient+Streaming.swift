import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A streamed call's answer: the response head as the pipeline accepted it, and its body still
/// arriving.
public struct StreamedResponse: Sendable {
    /// The response: status, header fields, final URL, and its ``HTTPResponse/body``, the same
    /// stream as ``body``.
    public let response: HTTPResponse
    /// The body, delivered as it arrives; single-use (see ``MessageBody``).
    public let body: MessageBody
    /// The call's context: request ID, attempts before the head arrived, the slots interceptors filled.
    public let context: RequestContext

    /// The status code.
    public var statusCode: Int { response.statusCode }
}

extension APIClient {
    /// Sends `endpoint` and returns as soon as the response head has arrived, with the body
    /// streaming — for exports, log tails, token streams and live feeds that must not be held in
    /// memory whole. The endpoint's `Response` type and decoding are not used: read the body as
    /// chunks, ``MessageBody/lines(maxLineLength:)`` or ``MessageBody/ndjson(as:decoder:maxLineLength:)``.
    ///
    /// ```swift
    /// let export = try await client.stream(ExportOrders(), options: .init(bufferLimit: 256 << 10))
    /// for try await order in export.body.ndjson(as: Order.self) { try await store.insert(order) }
    /// ```
    ///
    /// The whole pipeline applies up to the head: request ID, auth (a 401 refreshes the token and
    /// resends), retries with backoff, idempotency key, logging and metrics, redirects, all within
    /// ``EndpointPolicy/deadline``. A status the endpoint does not accept never reaches the caller
    /// as a stream: its body is read (at most 64 KiB) and mapped to a ``NetworkError`` exactly as
    /// in a buffered call. Once the head is returned nothing is retried: a failure ends the body
    /// with a ``NetworkError``. After the head, ``StreamingOptions/idleTimeout`` bounds each gap
    /// between chunks and ``StreamingOptions/maxDuration`` (if set) the whole call. The HTTP cache
    /// may answer from storage (one chunk) and stores a storable streamed response only once the
    /// consumer read all of it within the cache's entry limit (it copies what is read, never reads
    /// ahead); request deduplication passes streamed calls through.
    ///
    /// - Parameters:
    ///   - endpoint: What to call.
    ///   - options: Buffer bound and timeouts of the body.
    /// - Returns: The head and the body.
    /// - Throws: ``NetworkError``, as ``send(_:)-(E)`` does, until the head arrived.
    public func stream<E: Endpoint>(
        _ endpoint: E, options: StreamingOptions = StreamingOptions()
    ) async throws
        -> StreamedResponse
    {
        try await stream(endpoint, options: options, requiredEnvironment: nil)
    }

    /// ``stream(_:options:)``, sent only while the client points at the environment named
    /// `requiredEnvironment` (else ``EnvironmentMismatch``, nothing sent): the later requests of
    /// one transfer (a download's next range, a feed's reconnection) never go to another
    /// environment than its first. With `requiredSignIn`, the ``AuthInterceptor`` attaches a token
    /// only of that sign-in (else ``NetworkError/signedOut``, nothing sent). For Courier's modules.
    package func stream<E: Endpoint>(
        _ endpoint: E, options: StreamingOptions, requiredEnvironment: String?, requiredSignIn: SignInRequirement? = nil
    ) async throws -> StreamedResponse {
        // The body's idle timeout is measured below (`idleLimited`), exactly: a transport need
        // not keep its own, coarser one.
        var options = options
        options.idleTimedByCaller = true
        let context = RequestContext(for: endpoint, traits: CallTraits(streaming: options))
        if let requiredSignIn { context[SignInRequirementKey.self] = requiredSignIn }
        let (lane, environment) = try callLane(requiredEnvironment: requiredEnvironment)
        do {
            let request = try prepareRequest(for: endpoint, context: context, lane: lane, environment: environment)
            let pipeline = lane.pipeline
            let head = try await withDeadline(endpoint.policy.deadline, context: context, deadlines: lane.deadlines) {
                [request] in
                let head = try await pipeline.send(request, context: context)
                // A status the caller does not accept is an error, not its stream: read its error
                // body (bounded) for the NetworkError, within the deadline.
                return context.accepts(statusCode: head.statusCode) || context.isStoppedRedirect(head)
                    ? head : try await head.buffered()
            }
            guard context.accepts(statusCode: head.statusCode) || context.isStoppedRedirect(head) else {
                throw NetworkError(
                    response: head, knownErrors: endpoint.knownErrors, redactor: lane.redactor,
                    request: context.lastSentRequest)
            }
            var response = head
            response.body = head.body.idleLimited(to: options.idleTimeout, deadlines: lane.deadlines)
            if let maxDuration = options.maxDuration {
                response.body = response.body.limited(to: maxDuration - context.elapsed, deadlines: lane.deadlines)
            }
            return StreamedResponse(response: response, body: response.body, context: context)
        } catch {
            throw NetworkError(error)
        }
    }
}
