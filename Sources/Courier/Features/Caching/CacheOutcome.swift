/// How the HTTP cache answered one logical call — visible to the caller through
/// `Response.context.cacheOutcome` and to metrics through the same ``RequestContext`` slot.
///
/// Set by ``CacheInterceptor`` once per call; `nil` when no cache interceptor is installed.
///
/// | outcome | network? | body from |
/// |---|---|---|
/// | ``hit`` | no | cache (fresh entry, or any entry for `returnCacheDataElseLoad` / `onlyIfCached`) |
/// | ``revalidated`` | yes, a conditional request answered 304 (RFC 9111 §4.3.4) | cache |
/// | ``miss`` | yes, full response (stored when cacheable) | network |
/// | ``staleServed(_:)`` | background revalidation or failed origin (RFC 5861) | cache, stale |
/// | ``bypassed`` | yes; the cache was not consulted (non-GET, `noStore`, `Vary: *`…) | network |
public enum CacheOutcome: Sendable, Hashable, CustomStringConvertible {
    /// A stored response was served without contacting the origin.
    case hit
    /// A stored response was validated with a conditional request; the origin answered
    /// `304 Not Modified` and the stored body was served with the updated headers (RFC 9111 §4.3.4).
    case revalidated
    /// No usable stored response: the response came from the origin (and was stored if allowed).
    case miss
    /// A stale stored response was served on purpose (RFC 5861); the reason says why.
    case staleServed(StaleReason)
    /// The cache was not consulted for this call: an unsafe method, `CachePolicy.bypassCache`, or a
    /// request the cache cannot answer. Unsafe methods may still invalidate entries (RFC 9111 §4.4).
    case bypassed

    /// Why a stale response was served (RFC 5861).
    public enum StaleReason: Sendable, Hashable, CustomStringConvertible {
        /// Within the `stale-while-revalidate` window: served at once while one background
        /// revalidation updates the entry (RFC 5861 §3).
        case whileRevalidating
        /// Within the `stale-if-error` window: the origin answered 5xx or the transport failed
        /// (RFC 5861 §4).
        case error

        /// `while-revalidate` or `if-error`.
        public var description: String {
            switch self {
            case .whileRevalidating: return "while-revalidate"
            case .error: return "if-error"
            }
        }
    }

    /// `true` when the body came from the cache (``hit``, ``revalidated``, ``staleServed(_:)``).
    package var servedFromCache: Bool {
        switch self {
        case .hit, .revalidated, .staleServed: return true
        case .miss, .bypassed: return false
        }
    }

    /// A stable, low-cardinality label for logs and metrics: `hit`, `revalidated`, `miss`,
    /// `stale-while-revalidate`, `stale-if-error`, `bypassed`.
    public var description: String {
        switch self {
        case .hit: return "hit"
        case .revalidated: return "revalidated"
        case .miss: return "miss"
        case .staleServed(let reason): return "stale-\(reason)"
        case .bypassed: return "bypassed"
        }
    }
}

/// The ``RequestContext`` slot holding the call's ``CacheOutcome``.
package enum CacheOutcomeKey: RequestContextKey {
    /// The stored type.
    package typealias Value = CacheOutcome
}

extension RequestContext {
    /// How the HTTP cache answered this call; `nil` when no ``CacheInterceptor`` ran.
    public var cacheOutcome: CacheOutcome? {
        get { self[CacheOutcomeKey.self] }
        set {
            self[CacheOutcomeKey.self] = newValue
            if let newValue { emit(.cacheOutcome(newValue)) }
        }
    }
}
