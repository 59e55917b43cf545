import Foundation

/// One logical call, measured: what a ``MetricsInterceptor`` sends to a ``NetworkMetricsSink``.
///
/// Dimensions are low-cardinality on purpose — the path *template* (`/items/{id}`), never the raw
/// path with ids — so events can be aggregated into dashboards without leaking identifiers. An
/// endpoint without a ``Endpoint/pathTemplate`` (`Request.get("/users/\(id)")`) is named by its
/// path with every segment that looks like an identifier replaced by `{id}`: one with `@` (an
/// e-mail address), digits and separators only (`42`, `2026-11`), at least 8 characters with a
/// digit (a UUID, an order number, a token), or at least 24 characters.
public struct NetworkMetricsEvent: Sendable, Hashable {
    /// The call's request ID, to join the event with logs.
    public var requestID: RequestID
    /// The HTTP method.
    public var method: HTTPMethod
    /// The endpoint's path template, e.g. `/items/{id}` (``RequestContext/pathTemplate``), with
    /// identifier segments replaced by `{id}` (see above): `/users/42/orders/A1B2C3D4E5` becomes
    /// `/users/{id}/orders/{id}`.
    public var pathTemplate: String
    /// The final status code; `nil` when the call ended without a response.
    public var statusCode: Int?
    /// Wall-clock start of the call.
    public var startedAt: Date
    /// Time the call spent inside the interceptor — all attempts and backoff waits inside it —
    /// measured on `ContinuousClock` (monotonic). For a streamed body, until the head arrived.
    public var duration: Duration
    /// Attempts that reached the transport (0 for a cache hit).
    public var attempts: Int
    /// Retries performed: `attempts - 1`, never negative (``RequestContext/attempt`` minus 1).
    public var retryCount: Int
    /// Request body size in bytes as the interceptor saw it; `nil` when the body is a stream.
    public var requestBodyBytes: Int?
    /// Response body size in bytes after content decoding; `nil` without a response. For a
    /// streamed body (``APIClient/stream(_:options:)``, downloads, Server-Sent Events) it is the
    /// number of bytes the consumer read, counted when the body ended (see ``responseBodyDuration``).
    public var responseBodyBytes: Int?
    /// For a streamed body: the time from the response head to the end of the body as its consumer
    /// read it — to its end, a failure, or the consumer letting it go. The event of a streamed call
    /// is emitted then, not when the head arrives. `nil` for a buffered body, which ``duration``
    /// already includes.
    public var responseBodyDuration: Duration?
    /// The error label (`ErrorRecord.kind(of:)`) when the call ended without a response:
    /// `offline`, `timedOut`, `cancelled`, `transport`, `pinning`…; `nil` when a response arrived
    /// (whatever its status). A streamed body that fails after its head gives its error's label,
    /// and one its consumer let go before the end `cancelled`.
    public var errorKind: String?
    /// How the HTTP cache answered, when a cache interceptor sits inside the metrics interceptor.
    public var cacheOutcome: CacheOutcome?
    /// Phase timings of the last attempt where the platform delivers them (Apple); `nil` on Linux.
    public var taskTimings: TaskTimings?
    /// Redirects the call followed (Courier's redirect step, RFC 9110 §15.4), retries included.
    public var redirectCount: Int
    /// Why a retry the endpoint's policy allowed was not sent (``RetryRefusal/budgetExhausted``,
    /// ``RetryRefusal/circuitOpen``); `nil` when none was refused.
    public var retryRefusal: RetryRefusal?

    /// Courier's own measurement next to the transport's: ``duration`` (plus
    /// ``responseBodyDuration`` for a streamed body) minus the ``TaskTimings/total`` of
    /// ``taskTimings``. It is the time the call spent outside the transport's last task — the
    /// interceptors, scheduling, the hops of redirects Courier followed and, for a retried call, the
    /// earlier attempts and backoff waits. `nil` when the transport measured no total (URLSession
    /// on Linux). The two figures come from different clocks (URLSession's task metrics are
    /// wall-clock dates), so a value a few microseconds below zero can occur.
    public var durationOutsideTransport: Duration? {
        guard let total = taskTimings?.total else { return nil }
        return duration + (responseBodyDuration ?? .zero) - total
    }
}

/// Receives one ``NetworkMetricsEvent`` per call (and one ``WebSocketMetricsEvent`` per WebSocket
/// connection attempt, when it implements that method): forward it to your analytics or APM backend,
/// aggregate it, or collect it in a test (`CapturingMetricsSink` in CourierTesting).
///
/// Called synchronously on the request's task when the call ends; keep it quick and thread-safe
/// (hand heavy work to a queue or actor).
public protocol NetworkMetricsSink: Sendable {
    /// Takes one event.
    func record(_ event: NetworkMetricsEvent)

    /// Takes one WebSocket connection attempt's measurements (from a `WebSocketClient` of module
    /// CourierRealtime whose configuration lists this sink). Does nothing unless implemented.
    func record(_ event: WebSocketMetricsEvent)
}

/// A ``NetworkMetricsSink`` made from a closure.
///
/// ```swift
/// let metrics = MetricsInterceptor(sink: ClosureMetricsSink { event in analytics.track(event) })
/// ```
public struct ClosureMetricsSink: NetworkMetricsSink {
    private let handler: @Sendable (NetworkMetricsEvent) -> Void

    /// Wraps `handler`.
    public init(_ handler: @escaping @Sendable (NetworkMetricsEvent) -> Void) {
        self.handler = handler
    }

    public func record(_ event: NetworkMetricsEvent) { handler(event) }
}
