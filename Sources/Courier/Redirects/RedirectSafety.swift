import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Keeps credentials on their origin when a redirect is followed (see `RedirectFollower`).
///
/// A redirected request starts as a copy of the previous one, so a bearer token or a session
/// cookie would reach whatever host a `Location` names (a CDN, a compromised partner). Like
/// browsers and curl, Courier drops
/// `Authorization`, `Proxy-Authorization` and `Cookie` when a redirect leaves the origin
/// (scheme, host and port; RFC 6454 §4) or downgrades from HTTPS to HTTP. Cookies URLSession keeps
/// in its own storage are still added for the new host by the storage's domain rules.
enum RedirectSafety {
    /// Header fields that carry credentials and stay on their origin.
    static let credentialHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// `request` with credential headers removed when it goes to another origin than `previous`.
    static func sanitize(_ request: URLRequest, from previous: URL?) -> URLRequest {
        guard let target = request.url else { return request }
        if let previous, isSameOrigin(previous, target) { return request }
        var request = request
        for name in credentialHeaders { request.setValue(nil, forHTTPHeaderField: name) }
        return request
    }

    /// Whether two URLs share scheme, host and port (default ports filled in), per RFC 6454 §4.
    static func isSameOrigin(_ a: URL, _ b: URL) -> Bool {
        guard let schemeA = a.scheme?.lowercased(), let schemeB = b.scheme?.lowercased(),
            let hostA = a.host?.lowercased(), let hostB = b.host?.lowercased()
        else { return false }
        return schemeA == schemeB && hostA == hostB && port(a, schemeA) == port(b, schemeB)
    }

    private static func port(_ url: URL, _ scheme: String) -> Int? {
        url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : nil)
    }
}
