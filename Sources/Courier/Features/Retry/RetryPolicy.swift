import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which failed attempts are tried again, how many times, and how long to wait in between.
///
/// Applied by ``RetryInterceptor``, the only layer that retries (why only one: <doc:Retries>),
/// bounded by the call's total deadline (``EndpointPolicy/deadline``).
///
/// `maxRetries` counts retries after the first attempt (0 = run once). The delay before a retry
/// is `Retry-After` when the server sent a usable one, else exponential backoff with jitter — see
/// ``delay(forRetry:retryAfter:now:random:)``; which requests and failures are retried, see
/// `allowsRetry(method:hasIdempotencyKey:)` and `isRetryable(_:)`.
public struct RetryPolicy: Sendable, Hashable {
    /// How the backoff is randomised: ``Backoff/Jitter``.
    public typealias Jitter = Backoff.Jitter

    /// Retries after the first attempt; `0` runs the request once.
    public var maxRetries: Int
    /// The wait before each retry when the server sent no usable `Retry-After`: the first
    /// retry waits `backoff.delay(afterFailures: 1, …)`.
    public var backoff: Backoff
    /// Delay before the first retry, before jitter; doubles for each further retry
    /// (``backoff``'s ``Backoff/initialDelay``).
    public var baseDelay: Duration {
        get { backoff.initialDelay }
        set { backoff.initialDelay = max(.zero, newValue) }
    }
    /// Upper bound of the exponential backoff, before jitter (``backoff``'s ``Backoff/maximumDelay``).
    public var maxDelay: Duration {
        get { backoff.maximumDelay }
        set { backoff.maximumDelay = max(.zero, newValue) }
    }
    /// How the backoff is randomised (``backoff``'s ``Backoff/jitter``).
    public var jitter: Jitter {
        get { backoff.jitter }
        set { backoff.jitter = newValue }
    }
    /// Response statuses that are retried. Default: 408, 429, 500, 502, 503, 504.
    public var retryableStatusCodes: Set<Int>
    /// Transport failures a new attempt can fix: timed out, connection lost, cannot connect,
    /// DNS failure (see ``transientErrorCodes``).
    public var retryableErrorCodes: Set<URLError.Code>
    /// Longest server-requested wait this endpoint accepts before a retry. `Retry-After`
    /// (RFC 9110 §10.2.3) is an instruction, not a hint: Courier never sends the next attempt
    /// earlier than the server asked. When the server asks for longer than this, or for longer
    /// than the call's remaining deadline, retrying stops at once and the error carries the
    /// server's wait (``FailedResponse/retryAfter``), so the UI can say when to try again.
    public var maxRetryAfter: Duration
    /// Whether POST and PATCH may be retried when the request carries an `Idempotency-Key`.
    /// Requests with non-idempotent methods and no key are never retried (RFC 9110 §9.2.2).
    public var retriesKeyedNonIdempotentRequests: Bool
    /// Whether a read (`GET` or `HEAD`) that failed because the device is offline
    /// (``NetworkError/offline(_:)``) waits for the network to come back — bounded by the call's
    /// deadline — and then tries once more, outside ``maxRetries`` and the retry budget. Needs a
    /// ``ConnectivityWaiting`` given to ``RetryInterceptor``; `false` by default.
    public var waitsForConnectivity = false

    /// Creates a policy. The defaults are those of ``default``.
    public init(
        maxRetries: Int = 2,
        baseDelay: Duration = .milliseconds(500),
        maxDelay: Duration = .seconds(8),
        jitter: Jitter = .full,
        retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504],
        retryableErrorCodes: Set<URLError.Code> = RetryPolicy.transientErrorCodes,
        maxRetryAfter: Duration = .seconds(60),
        retriesKeyedNonIdempotentRequests: Bool = true
    ) {
        self.maxRetries = max(0, maxRetries)
        self.backoff = Backoff(initialDelay: baseDelay, maximumDelay: maxDelay, jitter: jitter)
        self.retryableStatusCodes = retryableStatusCodes
        self.retryableErrorCodes = retryableErrorCodes
        self.maxRetryAfter = maxRetryAfter
        self.retriesKeyedNonIdempotentRequests = retriesKeyedNonIdempotentRequests
    }

    /// Transport failures that a new attempt can plausibly fix: timed out, connection lost,
    /// cannot connect, DNS failure. The same set on every platform: a connection closed before any
    /// response byte, which URLSession on Linux (libcurl's "Empty reply from server") reports as
    /// `badServerResponse`, reaches the policy as `networkConnectionLost`, as on Apple platforms
    /// and over `CurlTransport`; a `badServerResponse` that remains is a reply that is not HTTP,
    /// which a new attempt would get again (the offline queue dead-letters it for the same reason).
    public static let transientErrorCodes: Set<URLError.Code> = [
        .timedOut, .networkConnectionLost, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed,
    ]

    /// Never retry.
    public static let none = RetryPolicy(maxRetries: 0)
    /// Two retries, 0.5 s base, 8 s cap, full jitter; a `Retry-After` of up to 60 s is waited for.
    public static let `default` = RetryPolicy()
    /// For endpoints polled on a timer: one retry, and a server's `Retry-After` (its requested
    /// polling interval) of up to 5 minutes is waited for.
    public static let polling = RetryPolicy(
        maxRetries: 1, baseDelay: .seconds(2), maxDelay: .seconds(30), maxRetryAfter: .seconds(300))
    /// For uploads: two retries with long waits (2 s base, 30 s cap), equal jitter.
    public static let upload = RetryPolicy(
        maxRetries: 2, baseDelay: .seconds(2), maxDelay: .seconds(30), jitter: .equal)
    /// For the token refresh call: one retry of transport failures only — a 4xx from the token
    /// endpoint is an answer (the session is over), not a glitch.
    public static let refresh = RetryPolicy(
        maxRetries: 1, baseDelay: .milliseconds(300), maxDelay: .seconds(2),
        retryableStatusCodes: [502, 503, 504])
}
