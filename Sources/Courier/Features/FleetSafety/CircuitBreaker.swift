/// Stops sending to a host that is failing, so that a backend in trouble gets room to recover
/// instead of a flood of requests that cannot succeed — per host, per client.
///
/// - **Closed** (normal): every attempt is sent; transient failures (a 500, 502, 503 or 504, a
///   time-out, a refused or lost connection) are counted.
/// - **Open**: after ``consecutiveFailures`` transient failures in a row, or a failure ratio of at
///   least ``failureRatio`` over ``window`` once ``minimumCalls`` outcomes were seen, calls to the
///   host fail at once, without network traffic, with ``NetworkError/backendUnavailable(host:retryAfter:)``
///   (an app shows "our servers are having trouble"; `CourierOffline` maps it to
///   `ConnectivityStatus.backendUnavailable`). The cool-down is ``coolDown``'s delay after the
///   number of openings in a row — jittered, so that devices that saw the same outage do not all
///   come back at the same moment.
/// - **Half-open**: after the cool-down, one call is sent as the probe while the others keep
///   failing fast; its success closes the breaker, its failure opens it again for a longer
///   cool-down.
///
/// Offline devices (no network path), cancellations and 4xx answers are neither successes nor
/// failures of the host, except that any answer from the server counts as a success.
///
/// ```swift
/// let retry = RetryInterceptor(circuitBreaker: CircuitBreaker(consecutiveFailures: 3))
/// ```
public struct CircuitBreaker: Sendable, Hashable {
    /// Transient failures in a row that open the breaker (≥ 1).
    public var consecutiveFailures: Int
    /// The share of failed outcomes over ``window`` that opens the breaker (`0...1`).
    public var failureRatio: Double
    /// Outcomes within ``window`` needed before ``failureRatio`` is applied (≥ 1).
    public var minimumCalls: Int
    /// The sliding window of the failure ratio.
    public var window: Duration
    /// The cool-down after the n-th opening in a row: `coolDown.delay(afterFailures: n, …)`.
    public var coolDown: Backoff
    /// The longest a server's `Retry-After` holds every call to its host (5 minutes by default):
    /// one answer — a misconfigured proxy's `Retry-After: 31536000`, one rate-limited endpoint —
    /// never locks the app out of the host for longer; then calls go out and the server can ask
    /// again. The call that got the answer still sees the whole wait.
    public var maximumPause: Duration

    /// Creates a breaker configuration. Values out of range are clamped.
    ///
    /// - Parameters:
    ///   - consecutiveFailures: Failures in a row that open it; 5 by default.
    ///   - failureRatio: The failure share that opens it; 0.5 by default.
    ///   - minimumCalls: Outcomes in the window before the ratio counts; 20 by default.
    ///   - window: The ratio's window; 30 s by default.
    ///   - coolDown: 5 s doubling to 60 s with equal jitter by default (the first cool-down lasts
    ///     2.5–5 s, a long outage's 30–60 s).
    ///   - maximumPause: The longest host-wide `Retry-After` pause; 5 minutes by default.
    public init(
        consecutiveFailures: Int = 5, failureRatio: Double = 0.5, minimumCalls: Int = 20, window: Duration = .seconds(30),
        coolDown: Backoff = Backoff(initialDelay: .seconds(5), maximumDelay: .seconds(60), jitter: .equal),
        maximumPause: Duration = .seconds(300)
    ) {
        self.maximumPause = max(.zero, maximumPause)
        self.consecutiveFailures = max(1, consecutiveFailures)
        self.failureRatio = failureRatio.isFinite ? min(1, max(0, failureRatio)) : 1
        self.minimumCalls = max(1, minimumCalls)
        self.window = max(.milliseconds(1), window)
        self.coolDown = coolDown
    }

    /// The defaults.
    public static let standard = CircuitBreaker()
}
