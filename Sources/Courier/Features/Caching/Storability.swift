import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Whether a response may be stored (RFC 9111 §3, §3.5), decided once per response.
enum Storability {
    /// Statuses a cache may store without explicit freshness (RFC 9110 §15.1). 206 is stored
    /// only as a part of a representation (see ``PartialContent``).
    static let cacheableByDefault: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// Statuses whose semantics this cache implements, for `must-understand` (RFC 9111 §5.2.2.3):
    /// the heuristically cacheable ones, the temporary redirects, and 206.
    static let understoodStatuses: Set<Int> = cacheableByDefault.union([302, 303, 307])

    /// Why a response was not stored; `nil` from ``reason(...)`` means it may be stored.
    enum Refusal: Equatable {
        case method, status, noStore, varyWildcard, varyOnCredentials, noFreshnessInformation, authorization, tooLarge
    }

    /// Decides whether `response` to `request` may be stored.
    ///
    /// - Parameters:
    ///   - request: The request as it reached the cache.
    ///   - response: The final response.
    ///   - isAuthorized: The request carries (or the pipeline will add) `Authorization`.
    ///   - cachesAuthorizedResponses: The endpoint opted in to storing authorized responses.
    ///   - maxEntryBytes: Responses whose ``CachedResponse/byteCount`` exceeds this are not stored.
    /// - Returns: `nil` when storable, else the first rule that forbids it.
    static func refusal(
        request: URLRequest, response: HTTPResponse, isAuthorized: Bool,
        cachesAuthorizedResponses: Bool, maxEntryBytes: Int
    ) -> Refusal? {
        // §3: the request method is understood and cacheable — Courier stores GET only; a HEAD
        // response only freshens a stored GET response (§4.3.5).
        guard (request.httpMethod ?? "GET").uppercased() == "GET" else { return .method }
        let status = response.statusCode
        // A final status; 304 is never stored as such, 206 only as a valid part (§3.3).
        guard (200..<600).contains(status), status != 304 else { return .status }
        if status == 206, !PartialContent.isStorable(response, for: request) { return .status }
        let responseControl = CacheControl(response.headers)
        let requestControl = CacheControl(HTTPHeaders(request))
        // §5.2.2.3: must-understand stores only understood statuses, and then overrides the
        // response's no-store (which is there for caches that do not know must-understand).
        let mustUnderstand = responseControl.has("must-understand")
        if mustUnderstand, !understoodStatuses.contains(status) { return .status }
        // §3: no-store in the request or the response.
        if requestControl.noStore || (responseControl.noStore && !mustUnderstand) { return .noStore }
        // §4.1: a Vary of * never matches; storing it would only waste space.
        if Vary.isWildcard(response.headers) { return .varyWildcard }
        // A Vary on `Cookie` or `Authorization` that the request lacks here: those fields are
        // added below the cache (the cookie storage, the auth step), so every later request would
        // match the stored "absent" value — one session served another's response (§4.1).
        let credentials = Vary.fieldNames(in: response.headers).filter { $0 == "cookie" || $0 == "authorization" }
        if credentials.contains(where: { request.value(forHTTPHeaderField: $0) == nil }) { return .varyOnCredentials }
        // §3.5: an authorized request is stored only when the response explicitly allows it.
        // `private` counts as explicit for a private cache; the endpoint may also opt in.
        if isAuthorized && !cachesAuthorizedResponses {
            let explicit =
                responseControl.isPublic || responseControl.isPrivate
                || responseControl.mustRevalidate || responseControl.sharedMaxAge != nil
            if !explicit { return .authorization }
        }
        // §3: explicit freshness, public/private, or a status cacheable by default.
        let explicitFreshness =
            responseControl.has("max-age") || response.headers.cacheValue("expires") != nil
            || responseControl.isPublic || responseControl.isPrivate
        if !explicitFreshness && !cacheableByDefault.contains(status) { return .noFreshnessInformation }
        if response.data.count > maxEntryBytes { return .tooLarge }
        return nil
    }

    /// `true` when `request` carries `Authorization`, or its endpoint policy makes the pipeline add
    /// one after the cache (the auth interceptor runs inside the cache).
    static func isAuthorized(_ request: URLRequest, policy: EndpointPolicy) -> Bool {
        request.value(forHTTPHeaderField: "Authorization") != nil || policy.auth != .none
    }
}
