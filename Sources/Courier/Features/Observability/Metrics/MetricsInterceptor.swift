import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Emits one ``NetworkMetricsEvent`` per pass through it to a ``NetworkMetricsSink``: request ID,
/// method, path template, status, duration, retry count, body sizes, error kind, cache outcome and
/// — where the platform measures them — phase timings.
///
/// A streamed body (``APIClient/stream(_:options:)``, downloads, Server-Sent Events) is counted as
/// its consumer reads it, and the call's event is emitted when the body ends — read to the end,
/// failed, or let go — with the bytes read and ``NetworkMetricsEvent/responseBodyDuration``. The
/// interceptor never reads the body itself.
///
/// Where it sits decides what an event describes: outside the retries, one event per call with
/// its retry count (``RequestContext/attempt`` minus 1); innermost, one per attempt. Position: see
/// ``Swift/Array/standard(tokenManager:cache:logger:redactor:recorders:metrics:retry:)``.
///
/// A response whose status the call accepts but whose body does not decode into the endpoint's
/// `Response` is a failed call: its event keeps the status and carries the error kind
/// (`decoding`), emitted once the client has tried to decode.
///
/// Durations are measured with the given clock, `ContinuousClock` by default (monotonic: wall-clock
/// changes don't distort them).
public struct MetricsInterceptor: Interceptor {
    /// Where events go.
    package let sink: any NetworkMetricsSink
    /// Time elapsed on the clock since the interceptor was made: read at both ends of a call, so
    /// a measurement allocates nothing.
    private let elapsedSinceOrigin: @Sendable () -> Duration

    /// Creates the interceptor, measuring with `ContinuousClock`.
    ///
    /// - Parameter sink: Receives one event per call.
    public init(sink: any NetworkMetricsSink) {
        self.init(sink: sink, clock: ContinuousClock())
    }

    /// Creates the interceptor, measuring with `clock` (inject a test clock in tests).
    ///
    /// - Parameters:
    ///   - sink: Receives one event per call.
    ///   - clock: Measures durations.
    public init<C: Clock>(sink: any NetworkMetricsSink, clock: C) where C.Duration == Duration {
        self.sink = sink
        let origin = clock.now
        self.elapsedSinceOrigin = { origin.duration(to: clock.now) }
    }

    public func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        let start = elapsedSinceOrigin()
        let startedAt = Date()
        let requestBytes: Int? = request.httpBody?.count ?? (request.httpBodyStream == nil ? 0 : nil)
        do {
            var response = try await next(request)
            let headAt = elapsedSinceOrigin()
            guard response.hasStreamedBody else {
                let done = event(
                    context, startedAt, headAt - start, requestBytes, status: response.statusCode,
                    responseBytes: response.data.count, errorKind: nil)
                guard context.decodes(response) else {
                    sink.record(done)
                    return response
                }
                // The client decodes after the pipeline: a body that does not decode fails the call.
                let sink = self.sink
                context.afterDecoding { failure in
                    var event = done
                    if let failure { event.errorKind = ErrorRecord.kind(of: failure) }
                    sink.record(event)
                }
                return response
            }
            let (sink, elapsed, status) = (sink, elapsedSinceOrigin, response.statusCode)
            let head = event(
                context, startedAt, headAt - start, requestBytes, status: status, responseBytes: nil, errorKind: nil)
            response.body = response.body.counted { [weak context] bytes, outcome in
                var event = head
                event.responseBodyBytes = Int(clamping: bytes)
                event.responseBodyDuration = elapsed() - headAt
                // Measured when the transfer ended. Weak: the body must not keep its call's context alive.
                event.taskTimings = context?.taskTimings ?? event.taskTimings
                switch outcome {
                case .completed: break
                case .failed(let error): event.errorKind = ErrorRecord.kind(of: error)
                case .abandoned: event.errorKind = ErrorRecord.kind(of: NetworkError.cancelled)
                }
                sink.record(event)
            }
            return response
        } catch {
            sink.record(
                event(
                    context, startedAt, elapsedSinceOrigin() - start, requestBytes, status: nil,
                    responseBytes: nil, errorKind: ErrorRecord.kind(of: error)))
            throw error
        }
    }

    private func event(
        _ context: RequestContext, _ startedAt: Date, _ duration: Duration, _ requestBytes: Int?,
        status: Int?, responseBytes: Int?, errorKind: String?
    ) -> NetworkMetricsEvent {
        let attempts = context.attempt  // one read: the retry count follows from it
        return NetworkMetricsEvent(
            requestID: context.requestID, method: context.method,
            pathTemplate: context.pathTemplateIsDefault
                ? MetricsPathTemplate.scrubbing(context.pathTemplate) : context.pathTemplate,
            statusCode: status, startedAt: startedAt, duration: duration, attempts: attempts,
            retryCount: max(0, attempts - 1), requestBodyBytes: requestBytes, responseBodyBytes: responseBytes,
            errorKind: errorKind, cacheOutcome: context.cacheOutcome, taskTimings: context.taskTimings,
            redirectCount: context.redirects.count, retryRefusal: context.retryRefusal)
    }
}
