/// What an endpoint needs from the pipeline: authentication, retries, a deadline, caching, logging
/// and idempotency — declared by the endpoint so the client never guesses from a path or method.
///
/// Start from a preset and adjust one field:
/// ```swift
/// var policy: EndpointPolicy { .authorizedRead.with(\.deadline, .seconds(5)) }
/// ```
public struct EndpointPolicy: Sendable, Hashable {
    /// Whether the request carries the user's access token (RFC 6750).
    public var auth: AuthRequirement
    /// Which failures are retried, how often and with what delay. Always kept: a client whose
    /// pipeline has no interceptor with ``PipelineCapabilities/retries`` adds a default
    /// ``RetryInterceptor`` (a pipeline turns retries off only explicitly, with
    /// `RetryInterceptor(maximumRetries: 0)`).
    public var retry: RetryPolicy
    /// Total deadline for the whole logical call — every attempt and every backoff wait included —
    /// enforced by Courier itself (URLSession on Linux ignores `timeoutIntervalForResource`).
    /// Expiry throws ``NetworkError/timedOut(_:)`` with `nil` (Courier's deadline, not a
    /// `URLError`). (URLSession's "timeout" is an idle timeout between bytes; Courier sets it no
    /// shorter than this deadline.)
    ///
    /// **Uploads: progress postpones it.** While a request body is being sent — a streamed body
    /// (`RequestBody.file`, multipart, any `BodyStream`) or one of at least 64 KiB in memory — the
    /// deadline counts from the later of the call's start and the last body bytes the transport
    /// reported sent. A slow upload that keeps moving is never cut off (a 500 MB video over a
    /// 10 Mbit/s uplink takes about 7 minutes; with ``authorizedUpload`` it finishes), as with
    /// URLSession's idle timeout. A stalled one (the peer stopped reading) fails with
    /// `timedOut(nil)` once `deadline` has passed with no body bytes sent, and once the last byte
    /// is sent the wait for the response head gets `deadline` from that byte. Same rule on
    /// `URLSessionTransport` and `CurlTransport` (they report the bytes through
    /// ``TransportReporter``; a custom transport that reports none keeps the plain deadline).
    /// A small body leaves at once, so the deadline of a JSON call is unchanged. The upload's own
    /// retries get the same budget: a retry is planned only if its wait fits in what is left.
    ///
    /// A streamed *response* body is not covered: the deadline ends at its head, and
    /// ``StreamingOptions/idleTimeout`` limits the silence between its bytes.
    public var deadline: Duration
    /// How the HTTP cache may answer this request (RFC 9111).
    public var cache: CachePolicy
    /// The most of the request and response that may be logged — a ceiling, kept by every
    /// pipeline: a ``LoggingInterceptor`` logs at most this much, and a pipeline without one logs
    /// nothing.
    public var logging: LoggingPolicy
    /// Whether an `Idempotency-Key` header is sent, and with which key.
    public var idempotency: IdempotencyPolicy
    /// Whether the HTTP cache may store and reuse responses to this endpoint's authorized requests
    /// even when the response does not explicitly allow it. `false` by default: an authorized
    /// response is then stored only when it carries `public`, `private`, `must-revalidate` or
    /// `s-maxage` (RFC 9111 §3.5). Entries are always partitioned per account.
    public var cachesAuthorizedResponses: Bool
    /// The least time a call takes, success or failure: a faster answer is held back until this
    /// much time has passed since the call started. For flows that must not look instant — a
    /// sign-in that returns in 50 ms reads as fake. `nil` (the default) never holds a result back;
    /// a cancelled call is never held.
    public var minimumDuration: Duration?
    /// Which networks the call may use by their cost (cellular, Low Data Mode); any by default.
    /// A refused call fails with ``NetworkError/networkUnavailable(_:)`` (see ``NetworkAccess``).
    public var networkAccess: NetworkAccess = .unrestricted

    /// Creates a policy; every parameter has the default of ``standard``.
    public init(
        auth: AuthRequirement = .none,
        retry: RetryPolicy = .default,
        deadline: Duration = .seconds(60),
        cache: CachePolicy = .useProtocolPolicy,
        logging: LoggingPolicy = .safe,
        idempotency: IdempotencyPolicy = .none,
        cachesAuthorizedResponses: Bool = false,
        minimumDuration: Duration? = nil
    ) {
        self.auth = auth
        self.retry = retry
        self.deadline = deadline
        self.cache = cache
        self.logging = logging
        self.idempotency = idempotency
        self.cachesAuthorizedResponses = cachesAuthorizedResponses
        self.minimumDuration = minimumDuration
    }

    /// Returns a copy with one field changed: `.authorizedRead.with(\.deadline, .seconds(5))`.
    public func with<Value>(_ keyPath: WritableKeyPath<EndpointPolicy, Value>, _ value: Value) -> EndpointPolicy {
        var copy = self
        copy[keyPath: keyPath] = value
        return copy
    }
}

extension EndpointPolicy {
    /// Public, read-only, obeys cache headers, default retries, 60 s deadline. The default for
    /// endpoints that declare no policy.
    public static let standard = EndpointPolicy()

    /// A signed-in read (GET of the user's data): bearer token, default retries (idempotent),
    /// HTTP caching by response headers, 30 s deadline, metadata-only logging.
    public static let authorizedRead = EndpointPolicy(
        auth: .required, retry: .default, deadline: .seconds(30),
        cache: .useProtocolPolicy, logging: .safe, idempotency: .none)

    /// A signed-in mutation (POST/PUT/PATCH/DELETE): bearer token, an automatic `Idempotency-Key`
    /// that stays the same on every retry — which is what makes retrying a POST safe — never
    /// cached, 30 s deadline.
    public static let authorizedWrite = EndpointPolicy(
        auth: .required, retry: .default, deadline: .seconds(30),
        cache: .bypassCache, logging: .safe, idempotency: .automatic)

    /// A signed-in upload: bearer token, the upload retry preset (few, slow retries), a 5-minute
    /// deadline, never cached, metadata-only logging (bodies are large and private), and an
    /// automatic idempotency key. The deadline is postponed by the body's progress (see
    /// ``deadline``): an upload of any size finishes while its bytes keep moving, and one that
    /// sends nothing for 5 minutes fails with ``NetworkError/timedOut(_:)``.
    public static let authorizedUpload = EndpointPolicy(
        auth: .required, retry: .upload, deadline: .seconds(300),
        cache: .bypassCache, logging: .safe, idempotency: .automatic)

    /// A public endpoint polled on a timer: no token, the polling retry preset (respects the
    /// server's `Retry-After`), 15 s deadline, conditional requests through the cache.
    public static let publicPolling = EndpointPolicy(
        auth: .none, retry: .polling, deadline: .seconds(15),
        cache: .useProtocolPolicy, logging: .safe, idempotency: .none)

    /// The token refresh call itself: no bearer token (it carries the refresh token in its body),
    /// the refresh retry preset (transport failures only), 15 s deadline, never cached, and
    /// metadata-only logging so the refresh token never reaches a log.
    public static let authRefresh = EndpointPolicy(
        auth: .none, retry: .refresh, deadline: .seconds(15),
        cache: .bypassCache, logging: .safe, idempotency: .none)
}

/// Whether a request carries the user's access token as `Authorization: Bearer …` (RFC 6750 §2.1).
///
/// The token goes only to the origins of the client's ``APIEnvironment`` (its base URLs): a call to
/// an absolute URL on any other origin with `.required` or `.optional` fails with
/// ``NetworkError/invalidRequest(_:)`` before anything is sent, and such a call never carries the
/// environment's header fields either — a link taken from a response cannot leak credentials.
public enum AuthRequirement: Sendable, Hashable {
    /// Never send a token (public endpoints, the login and refresh calls).
    case none
    /// Send the token. A call made while signed out fails locally with
    /// ``NetworkError/signedOut`` and sends nothing; a client whose pipeline has no
    /// ``AuthInterceptor`` fails the call with ``NetworkError/missingInterceptor(_:)``.
    case required
    /// Send the token when the user is signed in, and go anonymous otherwise.
    case optional
}

/// How the HTTP cache may answer a request and whether it may store the response (RFC 9111).
/// The names follow `URLRequest.CachePolicy` where one exists and RFC 9111's directives otherwise.
public enum CachePolicy: Sendable, Hashable {
    /// Obey the response's caching headers: serve fresh entries, revalidate stale ones, store what
    /// may be stored (RFC 9111 §4). The default.
    case useProtocolPolicy
    /// Do not read the cache; send the request and store the new response (pull-to-refresh).
    case reloadIgnoringCacheData
    /// Serve any stored entry, however stale, and only go to the network on a miss.
    case returnCacheDataElseLoad
    /// Serve only from the cache; a miss throws ``NetworkError/notCached`` without touching the
    /// network (RFC 9111 §5.2.1.7 `only-if-cached`; offline screens).
    case onlyIfCached
    /// RFC 9111 §5.2.1.5 `no-store`: never store the response. Reading is unaffected — a fresh
    /// stored response may still answer the request.
    case noStore
    /// Neither read nor write the cache (private or one-shot data); the outcome is
    /// ``CacheOutcome/bypassed``.
    case bypassCache
}

/// How much of a call may be written to the log. Whatever is logged is redacted first.
public enum LoggingPolicy: Sendable, Hashable {
    /// Log nothing for this endpoint.
    case disabled
    /// Metadata only: method, redacted URL, status, duration, sizes, redacted headers.
    case safe
    /// Metadata plus redacted, truncated body previews; for debug builds.
    case debugSafe
}

/// Whether the request carries an `Idempotency-Key` header
/// (IETF draft-ietf-httpapi-idempotency-key-header).
public enum IdempotencyPolicy: Sendable, Hashable {
    /// No key.
    case none
    /// A random key (UUID) generated once per logical call and sent unchanged on every retry.
    case automatic
    /// A key the caller chose, such as a client-assigned order id.
    case key(String)
}
