import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CacheTransaction {
    /// Stores a buffered response now (``record(_:requestTime:responseTime:known:)``). A streamed
    /// one is returned with its body teed: the bytes the consumer reads are copied, up to the
    /// cache's ``HTTPCache/Configuration/maxEntryBytes``, and the response is stored when — and
    /// only if — the consumer reads it to the end within that size. A longer body is passed on
    /// without keeping more of it; a failed or abandoned one stores nothing.
    func recordOrTee(
        _ response: HTTPResponse, requestTime: Date, responseTime: Date, known: [CachedResponse]?
    ) async
        -> HTTPResponse
    {
        let body = response.body
        guard !body.isBuffered else {
            await record(response, requestTime: requestTime, responseTime: responseTime, known: known)
            return response
        }
        guard !followedRedirect else {
            await removeSuperseded()
            return response
        }
        guard shouldWrite, !isHead, (200..<300).contains(response.statusCode),
            Storability.refusal(
                request: request, response: response, isAuthorized: Storability.isAuthorized(request, policy: context.policy),
                cachesAuthorizedResponses: context.policy.cachesAuthorizedResponses,
                maxEntryBytes: cache.configuration.maxEntryBytes) == nil
        else { return response }
        var teed = response
        let transaction = self
        teed.body = body.teed(upTo: cache.configuration.maxEntryBytes) { bytes in
            var complete = response
            complete.data = bytes
            await transaction.record(complete, requestTime: requestTime, responseTime: responseTime, known: known)
        }
        return teed
    }

    /// Stores a response when allowed (§3), without its hop-by-hop fields (§3.1); a newer
    /// non-storable, non-error answer removes the stored ones it supersedes. 5xx answers leave
    /// stored responses alone (they may still be served by `stale-if-error`). A `206` is stored
    /// as a part, combined with a stored part of the same representation when they touch (§3.3),
    /// and never replaces a stored complete response with the same strong entity tag.
    func record(_ response: HTTPResponse, requestTime: Date, responseTime: Date, known: [CachedResponse]?) async {
        guard shouldWrite, !isHead, response.body.isBuffered else { return }
        guard !followedRedirect else {
            await removeSuperseded()
            return
        }
        let refusal = Storability.refusal(
            request: request, response: response,
            isAuthorized: Storability.isAuthorized(request, policy: context.policy),
            cachesAuthorizedResponses: context.policy.cachesAuthorizedResponses,
            maxEntryBytes: cache.configuration.maxEntryBytes)
        guard refusal == nil else {
            // An answer to a range request (a 206 or a 416) says nothing about the stored whole.
            if range == nil, response.statusCode < 500, response.statusCode != 304 {
                await cache.storage.removeResponses(for: key)
            }
            return
        }
        let names = Vary.fieldNames(in: response.headers)
        var stored = CachedResponse(
            statusCode: response.statusCode, headers: HopByHop.removed(from: response.headers), body: response.data,
            url: response.url ?? request.url, requestTime: requestTime, responseTime: responseTime,
            varyingRequestHeaders: Vary.requestValues(names, of: request))
        // §4.1: when the origin changed the fields it varies on, older variants no longer apply.
        let existing: [CachedResponse]
        if let known { existing = known } else { existing = await cache.storage.responses(for: key) }
        if existing.contains(where: { Set(Vary.fieldNames(in: $0.headers)) != Set(names) }) {
            await cache.storage.removeResponses(for: key)
        } else if stored.statusCode == 206, let sameVariant = existing.first(where: { $0.variantID == stored.variantID }) {
            if let combined = PartialContent.combine(sameVariant, with: stored) {
                stored = combined
            } else if sameVariant.statusCode != 206, let tag = PartialContent.strongTag(sameVariant.headers),
                PartialContent.strongTag(stored.headers) == tag
            {
                return
            }
        }
        await cache.store(stored, for: key, generation: generation)
    }

    /// Whether the response came from another URL: a redirect was followed below the cache.
    ///
    /// Such a response is the answer to the redirect's target, not to this request's URL (the
    /// cache key, RFC 9111 §2), and the redirect's own cacheability (RFC 9110 §15.4) is unknown
    /// here: stored under this URL, it would be served after the origin points the URL elsewhere
    /// (`GET /latest` → `302 /v/1` kept answering `/v/1` after the server moved on to `/v/2`).
    var followedRedirect: Bool { !context.redirects.isEmpty }

    /// Drops what is stored for this URL once the origin answers it with a redirect: the stored
    /// responses are superseded, like by any newer non-storable answer (§4.4).
    private func removeSuperseded() async {
        guard shouldWrite, range == nil else { return }
        await cache.storage.removeResponses(for: key)
    }

    /// `false` for calls that only joined another call's network request (that call stores it)
    /// and for requests with `Cache-Control: no-store` or ``CachePolicy/noStore`` (§5.2.1.5).
    var shouldWrite: Bool {
        context[DeduplicationRoleKey.self] != .joined && !requestControl.noStore && context.policy.cache != .noStore
    }
}
