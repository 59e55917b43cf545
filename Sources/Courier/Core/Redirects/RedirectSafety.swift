import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Keeps credentials on their origin when a redirect is followed (see `RedirectFollower`).
///
/// A redirected request starts as a copy of the previous one, so a bearer token, an API key or a
/// session cookie would reach whatever host a `Location` names (a CDN, a compromised partner).
/// Courier drops every secret-bearing field (`Authorization`, `Proxy-Authorization`, `Cookie`,
/// and each field the client's ``Redactor`` hides) when a redirect leaves the origin (scheme, host
/// and port; RFC 6454 §4), except those ``RedirectPolicy/forwardedCredentialHeaders`` names, and
/// refuses an `https` → `http` hop unless ``RedirectPolicy/allowsInsecureRedirects`` (then without
/// any secret field). Cookies URLSession keeps in its own storage are still added for the new host
/// by the storage's domain rules (a `Secure` cookie never over `http`).
package enum RedirectSafety {
    /// Header fields that always carry credentials.
    static let credentialHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// `request` with secret header fields removed when it goes to another origin than `previous`.
    ///
    /// - Throws: `URLError(.appTransportSecurityRequiresSecureConnection)` for an `https` → `http`
    ///   hop the rules do not allow.
    static func sanitize(_ request: URLRequest, from previous: URL?, rules: RedirectRules = .default) throws -> URLRequest {
        guard let target = request.url else { return request }
        if let previous, isSameOrigin(previous, target) { return request }
        let downgrade = previous?.scheme?.lowercased() == "https" && target.scheme?.lowercased() == "http"
        if downgrade, !rules.policy.allowsInsecureRedirects {
            throw URLError(
                .appTransportSecurityRequiresSecureConnection,
                userInfo: [
                    NSLocalizedDescriptionKey: "refused a redirect from https to http (\(target.host ?? "")): "
                        + "set RedirectPolicy.allowsInsecureRedirects to follow it",
                    NSURLErrorFailingURLErrorKey: target,
                ])
        }
        var request = request
        for name in (request.allHTTPHeaderFields ?? [:]).keys where rules.isSecret(name) {
            if !downgrade, rules.forwards(name) { continue }
            request.setValue(nil, forHTTPHeaderField: name)
        }
        return request
    }

    /// The request a session that follows a redirect itself (a background session's, which no
    /// pipeline step sees) may send after `previous` answered with a redirect: `next` without its
    /// secret header fields (as ``RedirectPolicy/default`` and the default ``Redactor`` name them)
    /// when it leaves that origin, or `nil` — the redirect is not followed — for `https` → `http`.
    package static func followedBySession(_ next: URLRequest, from previous: URL?) -> URLRequest? {
        try? sanitize(next, from: previous)
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
