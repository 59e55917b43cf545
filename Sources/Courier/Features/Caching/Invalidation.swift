import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which stored responses an unsafe request invalidates (RFC 9111 §4.4).
enum Invalidation {
    /// Methods that are not safe (RFC 9110 §9.2.1); unknown methods count as unsafe.
    static func isUnsafe(_ method: String) -> Bool {
        !["GET", "HEAD", "OPTIONS", "TRACE"].contains(method.uppercased())
    }

    /// The URLs whose stored responses must go after `response` to the unsafe `request`: none
    /// unless the status is non-error (2xx or 3xx, §4.4); then the target URI, plus `Location`
    /// and `Content-Location` when they resolve to the same origin as the target (to stop
    /// a response from evicting another site's entries).
    ///
    /// `redirects` are the hops followed below the cache, whose 3xx answers the cache never saw:
    /// a 307/308 sent the unsafe request again to its target, which goes too; a 301/302/303's
    /// `Location` (Post/Redirect/Get) goes when it is on the origin that answered with it.
    static func urls(for request: URLRequest, response: HTTPResponse, redirects: [RedirectRecord] = []) -> [URL] {
        guard (200..<400).contains(response.statusCode), let target = request.url else { return [] }
        var urls = [target]
        for hop in redirects {
            guard let to = hop.to else { continue }
            let resent = hop.statusCode == 307 || hop.statusCode == 308
            if resent || (hop.from.map(CacheKey.origin(of:)) == CacheKey.origin(of: to)) { urls.append(to) }
        }
        let targetOrigin = CacheKey.origin(of: target)
        for field in ["Location", "Content-Location"] {
            guard let value = response.headers.cacheValue(field.lowercased()),
                let resolved = URL(string: String(HeaderScanning.trim(value)), relativeTo: target)?.absoluteURL,
                CacheKey.origin(of: resolved) == targetOrigin
            else { continue }
            urls.append(resolved)
        }
        return urls
    }
}
