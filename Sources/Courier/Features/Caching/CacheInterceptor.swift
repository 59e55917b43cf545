import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers requests from an ``HTTPCache`` as a private cache per RFC 9111 (and RFC 5861's
/// `stale-while-revalidate` / `stale-if-error`), driven by the endpoint's ``CachePolicy``.
///
/// Put it outside the retry interceptor — usually via ``HTTPCache/interceptors()`` — so a hit
/// costs no retries and `stale-if-error` applies only once retries are spent (the recommended
/// order is on ``Swift/Array/standard(tokenManager:cache:logger:redactor:recorders:metrics:retry:)``).
///
/// What it does per request (RFC sections in brackets):
/// - GET (and HEAD, answered from a stored GET response) with ``CachePolicy/useProtocolPolicy``:
///   a fresh stored response is served without the network [§4.2] (outcome ``CacheOutcome/hit``);
///   a stale or `no-cache` one is validated with `If-None-Match` / `If-Modified-Since` [§4.3.1],
///   and a 304 freshens it [§4.3.4] (``CacheOutcome/revalidated``); within `stale-while-revalidate`
///   the stale response is served at once and one background revalidation updates it
///   (``CacheOutcome/staleServed(_:)``); within `stale-if-error`, a 500/502/503/504 or a transport
///   failure serves the stale response instead of the error.
/// - ``CachePolicy/reloadIgnoringCacheData``: always the network; the response is stored.
/// - ``CachePolicy/returnCacheDataElseLoad``: any stored response, however stale, else the network.
/// - ``CachePolicy/onlyIfCached``: any stored response, else ``NetworkError/notCached`` without
///   touching the network [§5.2.1.7].
/// - ``CachePolicy/noStore``: answered like ``CachePolicy/useProtocolPolicy`` but nothing is stored
///   (RFC 9111 §5.2.1.5).
/// - ``CachePolicy/bypassCache``: neither reads nor writes (``CacheOutcome/bypassed``).
/// - Unsafe methods (POST, PUT, PATCH, DELETE…) pass through; a 2xx/3xx answer invalidates the
///   stored responses of the target URI and of same-origin `Location` / `Content-Location` [§4.4],
///   and of the redirects followed on the way (a 303's `Location`, a 307/308's new target).
///   So does a call that ends without an answer (a connection lost after the server read the
///   request, a timeout): the server may have applied it, and the target URI's stored responses go.
/// - A GET for one byte range (`Range: bytes=0-99`, `bytes=100-`, `bytes=-5`) is answered as a
///   `206` from a stored complete response, or from a stored part that contains it [§3.4]; `206`
///   responses are stored as parts and combined into a complete response once they cover it
///   [§3.3, RFC 9110 §14.3] (parts must share a strong `ETag`).
/// - Requests with their own conditional headers (`If-Range` too), several ranges, or a `Range`
///   on HEAD pass through untouched.
///
/// The outcome is written to ``RequestContext/cacheOutcome`` for the caller and for metrics.
public struct CacheInterceptor: Interceptor {
    /// ``PipelineCapabilities/caching``.
    public var capabilities: PipelineCapabilities { .caching }

    /// The cache this interceptor reads and writes.
    package let cache: HTTPCache

    /// Creates the interceptor for `cache`.
    public init(cache: HTTPCache) { self.cache = cache }

    /// The token managers of the client whose pipeline holds this interceptor (its lane's), whose
    /// session ends clear the shared partition (see `standard(tokenManager:cache:…)`).
    private let signIns = Locked<[TokenManager]?>(nil)

    public func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        let method = (request.httpMethod ?? "GET").uppercased()
        guard let url = request.url else {
            context.cacheOutcome = .bypassed
            return try await next(request)
        }
        if Invalidation.isUnsafe(method) {
            context.cacheOutcome = .bypassed
            let response: HTTPResponse
            do {
                response = try await next(request)
            } catch {
                // No answer (a connection lost after the server read the request, a timeout, a
                // cancellation): the server may have applied it, so the stored responses of the
                // target go as after a 2xx, never served as if nothing had changed.
                await cache.invalidate(url)
                throw error
            }
            for target in Invalidation.urls(for: request, response: response, redirects: context.redirects) {
                await cache.invalidate(target)
            }
            return response
        }
        let isConditional = Validation.conditionalFields.contains { request.value(forHTTPHeaderField: $0) != nil }
        // A single byte range of a GET is answered from stored content (RFC 9111 §3.4); other
        // range requests (several ranges, HEAD, unknown units) go to the origin untouched.
        let rangeIsAnswerable =
            request.value(forHTTPHeaderField: "Range") == nil
            || (method == "GET" && ByteRange(request) != nil)
        // A call that may stop at a redirect must not be answered by (or store) what a following
        // call would get, nor leave a 3xx that following calls would be served (an only-if-cached
        // read never reaches the network, so it keeps its promise).
        guard method == "GET" || method == "HEAD", context.policy.cache != .bypassCache, !isConditional, rangeIsAnswerable,
            context.redirectMode.followsAll || context.policy.cache == .onlyIfCached
        else {
            context.cacheOutcome = .bypassed
            return try await next(request)
        }
        // The partition every account shares is cleared when a session ends, by a task the token
        // manager starts: a read made right after a sign-out or another sign-in waits for it, so
        // it is never answered with the previous user's entry (a hit never reaches the auth step).
        // A sign-in that comes during the wait is not the call's: the auth step then sends nothing
        // (as a retry whose first attempt went out under another sign-in).
        if !cache.configuration.partitionsByAccount, let managers = signIns.current {
            for manager in managers {
                if let entered = try await manager.awaitForgottenSession(), context.policy.auth != .none,
                    context[SignInSessionKey.self] == nil
                {
                    context[SignInSessionKey.self] = entered
                }
            }
        }
        let key = CacheKey(partition: cache.currentPartition, url: url)
        let generation = cache.generation(of: key)
        // A request of another generation (one sent before a write to this URL) is never joined.
        context[CacheGenerationKey.self] = generation
        let transaction = CacheTransaction(
            cache: cache, request: request, context: context, next: next,
            key: key, generation: generation,
            isHead: method == "HEAD")
        return try await transaction.run()
    }
}

extension CacheInterceptor: LaneParticipant {
    /// Takes the token managers of the first client whose pipeline holds this interceptor.
    package func adoptLaneTokenManagers(_ managers: [TokenManager]) {
        signIns.withLock { current in
            if current == nil { current = managers }
        }
    }
}

/// The ``RequestContext`` slot holding the ``HTTPCache/Generation`` of the call's cache key when
/// the call reached the cache: in-flight de-duplication never shares a request across
/// generations, so a read made after a write to its URL does not join one sent before it.
enum CacheGenerationKey: RequestContextKey {
    /// The stored type.
    typealias Value = HTTPCache.Generation
}
