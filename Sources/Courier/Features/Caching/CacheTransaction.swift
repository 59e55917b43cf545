import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One GET or HEAD through the cache: lookup, freshness decision, validation, storage.
/// See ``CacheInterceptor`` for the rules; this type only carries them out.
struct CacheTransaction: Sendable {
    let cache: HTTPCache
    let request: URLRequest
    let context: RequestContext
    let next: Next
    let key: CacheKey
    let generation: HTTPCache.Generation
    let isHead: Bool
    /// The request's own directives (RFC 9111 §5.2.1); `Pragma: no-cache` counts as `no-cache`
    /// when there is no `Cache-Control` (§5.4).
    let requestControl: CacheControl
    /// The single byte range a GET asks for (RFC 9110 §14.2); `nil` for the whole representation.
    let range: ByteRange?

    init(
        cache: HTTPCache, request: URLRequest, context: RequestContext, next: Next,
        key: CacheKey, generation: HTTPCache.Generation, isHead: Bool
    ) {
        self.cache = cache
        self.request = request
        self.context = context
        self.next = next
        self.key = key
        self.generation = generation
        self.isHead = isHead
        self.range = isHead ? nil : ByteRange(request)
        if let value = request.value(forHTTPHeaderField: "Cache-Control") {
            requestControl = CacheControl(value)
        } else if request.value(forHTTPHeaderField: "Pragma")?.lowercased().contains("no-cache") == true {
            requestControl = CacheControl("no-cache")
        } else {
            requestControl = CacheControl("")
        }
    }

    var now: Date { cache.configuration.now() }

    func run() async throws -> HTTPResponse {
        let policy = context.policy.cache
        if policy == .reloadIgnoringCacheData { return try await fetch(known: nil) }

        let entries = await cache.storage.responses(for: key)
        let entry = entries.first { Vary.matches($0, request) && PartialContent.canAnswer($0, range: range) }

        if policy == .returnCacheDataElseLoad || policy == .onlyIfCached {
            if let entry { return serve(entry, .hit) }
            if policy == .onlyIfCached { throw NetworkError.notCached }
            return try await fetch(known: entries)
        }

        guard let entry else {
            if requestControl.onlyIfCached { throw NetworkError.notCached }
            // §4.3.1: other variants' entity tags may still be what the origin selects for this request.
            if isHead || range != nil
                || Validation.entityTags(nil, entries.filter { Vary.hasSameCredential($0, request) }).isEmpty
            {
                return try await fetch(known: entries)
            }
            return try await validate(nil, known: entries, staleAllowed: false)
        }
        let freshness = cache.freshness(of: entry, at: now)
        let control = CacheControl(entry.headers)
        let mustValidate = control.noCache || requestControl.noCache
        // §4.2.4: no-cache and must-revalidate forbid serving a stale response.
        let staleAllowed = !mustValidate && !control.mustRevalidate

        if !mustValidate && Self.satisfies(freshness, requestControl) { return serve(entry, .hit, freshness) }
        if staleAllowed, let maxStale = requestControl.maxStale,
            freshness.staleness <= TimeInterval(maxStale ?? Int.max)
        {
            // §5.2.1.2: the client accepts a stale response.
            return serve(entry, .hit, freshness)
        }
        if requestControl.onlyIfCached { throw NetworkError.notCached }
        // RFC 5861 §3, unless the request itself asked for a younger response (max-age, min-fresh).
        if staleAllowed, !isHead, !requestControl.has("max-age"), !requestControl.has("min-fresh"),
            let window = control.staleWhileRevalidate, freshness.staleness <= TimeInterval(window)
        {
            revalidateInBackground(entry)
            return serve(entry, .staleServed(.whileRevalidating), freshness)
        }
        if isHead { return try await forwardHead(freshening: entry) }
        return try await validate(entry, known: entries, staleAllowed: staleAllowed)
    }

    // MARK: Decisions

    /// Fresh, and within the request's `max-age` and `min-fresh` (§5.2.1.1, §5.2.1.3).
    static func satisfies(_ freshness: Freshness, _ requestControl: CacheControl) -> Bool {
        guard freshness.isFresh else { return false }
        if requestControl.has("max-age"), freshness.age > TimeInterval(requestControl.maxAge ?? 0) { return false }
        if let minFresh = requestControl.minFresh, freshness.remaining < TimeInterval(minFresh) { return false }
        return true
    }

    /// The `stale-if-error` window (RFC 5861 §4) of the request or the response, whichever is
    /// larger, covers how stale `entry` is now.
    private func staleIfErrorCovers(_ entry: CachedResponse) -> Bool {
        let window = [CacheControl(entry.headers).staleIfError, requestControl.staleIfError].compactMap { $0 }.max()
        guard let window else { return false }
        return cache.freshness(of: entry, at: now).staleness <= TimeInterval(window)
    }

    /// RFC 5861 §4: "an error is any situation that would result in a 500, 502, 503, or 504".
    static func isOriginError(_ status: Int) -> Bool { [500, 502, 503, 504].contains(status) }

    // MARK: Serving

    /// `entry` as the response, with its current age; `freshness` when already computed.
    private func serve(_ entry: CachedResponse, _ outcome: CacheOutcome, _ freshness: Freshness? = nil) -> HTTPResponse {
        context.cacheOutcome = outcome
        let age = (freshness ?? cache.freshness(of: entry, at: now)).age
        let response = entry.response(age: age, includeBody: !isHead)
        // §3.4, RFC 9110 §14: a range request gets its part of the stored response as a 206.
        return range.map { PartialContent.slice(response, to: $0) } ?? response
    }

    // MARK: Network

    /// Sends the request unconditionally and stores what may be stored. A 304 to it (no stored
    /// response to apply it to) is answered by one more unconditional request, never decoded.
    private func fetch(known entries: [CachedResponse]?, refetchOnNotModified: Bool = true) async throws -> HTTPResponse {
        var requestTime = now
        var response = try await next(request)
        if response.statusCode == 304, refetchOnNotModified {
            requestTime = now
            response = try await next(request)
        }
        let recorded = await recordOrTee(response, requestTime: requestTime, responseTime: now, known: entries)
        context.cacheOutcome = .miss
        return recorded
    }

    /// Validates `entry` with a conditional request (§4.3.1) and applies the answer (§4.3.3).
    /// For a GET of the whole representation the request also lists the entity tags of the other
    /// stored variants, and a 304 naming one of them selects that variant (§4.3.4), which is then
    /// stored for this request's `Vary` values too. `entry` is `nil` when no stored variant
    /// matches the request and only the others are offered.
    private func validate(
        _ entry: CachedResponse?, known entries: [CachedResponse], staleAllowed: Bool
    ) async throws -> HTTPResponse {
        let validated = entry.flatMap { Validation.hasValidator($0) ? $0 : nil }
        // Another user's entries are never offered: a 304 selecting one would serve it to this request.
        let others = range == nil ? entries.filter { $0 != entry && Vary.hasSameCredential($0, request) } : []
        let conditional = Validation.conditionalRequest(request, validating: validated, others: others)
        let isConditional =
            conditional.value(forHTTPHeaderField: "If-None-Match") != nil
            || conditional.value(forHTTPHeaderField: "If-Modified-Since") != nil
        let requestTime = now
        let response: HTTPResponse
        do {
            response = try await next(conditional)
        } catch {
            if let entry, staleAllowed, Self.isOriginFailure(error), staleIfErrorCovers(entry) {
                return serve(entry, .staleServed(.error))
            }
            throw error
        }
        let responseTime = now
        if response.statusCode == 304 {
            guard isConditional, !followedRedirect,
                let selected = Validation.selected(by: response, validated: validated, others: others)
            else {
                // A 304 that matches nothing stored, or that came from another URL after a redirect:
                // one unconditional re-fetch (§4.3.4).
                return try await fetch(known: entries, refetchOnNotModified: false)
            }
            var updated = Validation.freshen(selected, with: response, requestTime: requestTime, responseTime: responseTime)
            if CacheControl(updated.headers).noStore {
                // The server no longer lets the response be stored (§5.2.2.5): served this once,
                // then gone, never served again without asking it.
                await cache.storage.removeResponses(for: key)
                return serve(updated, .revalidated)
            }
            if shouldWrite { await cache.store(updated, for: key, generation: generation) }
            if !Vary.matches(updated, request) {
                updated.varyingRequestHeaders = Vary.requestValues(Vary.fieldNames(in: updated.headers), of: request)
                if shouldWrite { await cache.store(updated, for: key, generation: generation) }
            }
            return serve(updated, .revalidated)
        }
        if let entry, staleAllowed, Self.isOriginError(response.statusCode), staleIfErrorCovers(entry) {
            return serve(entry, .staleServed(.error))
        }
        let recorded = await recordOrTee(response, requestTime: requestTime, responseTime: responseTime, known: entries)
        context.cacheOutcome = .miss
        return recorded
    }

    /// HEAD with no fresh stored GET response: forwarded as is; its header fields freshen the
    /// stored GET response when the validators agree, and invalidate it when they do not (§4.3.5).
    private func forwardHead(freshening entry: CachedResponse) async throws -> HTTPResponse {
        let requestTime = now
        let response = try await next(request)
        context.cacheOutcome = .miss
        guard shouldWrite, (200..<300).contains(response.statusCode) else { return response }
        // A HEAD answered through a redirect is another resource's (RFC 9111 §2): it freshens
        // nothing here, and the stored GET of this URL is no longer what the server serves.
        if followedRedirect {
            await cache.storage.removeResponses(for: key)
            return response
        }
        if Validation.headResponse(response, agreesWith: entry) {
            await storeFreshened(entry, with: response, requestTime: requestTime, responseTime: now)
        } else {
            await cache.storage.removeResponses(for: key)
        }
        return response
    }

    /// Stores `entry` with the header fields of `response`, which validated it without a body (a
    /// 304, RFC 9111 §4.3.4; a HEAD's 2xx, §4.3.5) — or, when those fields now say `no-store`
    /// (§5.2.2.5), removes the stored responses instead, so that none is served again without
    /// asking the server.
    private func storeFreshened(
        _ entry: CachedResponse, with response: HTTPResponse, requestTime: Date, responseTime: Date
    ) async {
        let updated = Validation.freshen(entry, with: response, requestTime: requestTime, responseTime: responseTime)
        if CacheControl(updated.headers).noStore {
            await cache.storage.removeResponses(for: key)
        } else {
            await cache.store(updated, for: key, generation: generation)
        }
    }

    // MARK: stale-while-revalidate

    /// Starts one background revalidation of `entry` unless one is already running (RFC 5861 §3).
    /// It runs the rest of the pipeline (retries, auth) with this call's context, stores a 304's
    /// freshened headers or a new full response, and gives up silently on errors.
    private func revalidateInBackground(_ entry: CachedResponse) {
        context.disarmStartHook()  // the caller already has its answer: no spinner for this
        let id = "\(key.partition)\u{0}\(key.url)\u{0}\(entry.variantID)"
        let background = CacheTransaction(
            cache: cache, request: request, context: context, next: next,
            key: key, generation: generation, isHead: false)
        cache.revalidations.start(id: id, partition: key.partition, timeout: cache.configuration.backgroundRevalidationTimeout) {
            await background.revalidate(entry)
        }
    }

    private func revalidate(_ entry: CachedResponse) async {
        let conditional = Validation.hasValidator(entry) ? Validation.conditionalRequest(request, validating: entry) : request
        let requestTime = now
        guard let response = try? await next(conditional), !Task.isCancelled else { return }
        let responseTime = now
        if response.statusCode == 304 {
            guard Validation.hasValidator(entry), !followedRedirect, Validation.notModified(response, matches: entry) else {
                return
            }
            await storeFreshened(entry, with: response, requestTime: requestTime, responseTime: responseTime)
            return
        }
        guard !Self.isOriginError(response.statusCode) else { return }
        // A streamed revalidation is dropped unread: its tee never completes, nothing is stored.
        _ = await recordOrTee(response, requestTime: requestTime, responseTime: responseTime, known: nil)
    }

    /// RFC 5861 §4's errors when thrown rather than returned: the origin could not be reached
    /// (a `URLError` other than cancellation), or an inner interceptor turned a 500/502/503/504
    /// into an error. Cancellation, auth failures and other errors are never masked by stale data.
    static func isOriginFailure(_ error: any Error) -> Bool {
        if Task.isCancelled { return false }
        switch error {
        case let error as URLError:
            return error.code != .cancelled
        case let error as NetworkError:
            switch error {
            case .offline, .networkUnavailable, .transport, .timedOut(.some): return true
            case .server(let failed): return isOriginError(failed.statusCode)
            default: return false
            }
        default:
            return false
        }
    }
}
