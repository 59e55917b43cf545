import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Keeps credentials on their origin when URLSession follows a redirect.
///
/// URLSession copies every header field of the original request onto the redirected one — on
/// Linux also across hosts — so a bearer token or a session cookie would reach whatever host a
/// `Location` names (a CDN, a compromised partner). Like browsers and curl, Courier drops
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

/// The session delegate of ``URLSessionTransport``: applies ``RedirectSafety`` to every redirect.
/// On Apple platforms it implements no authentication challenge, so per-task delegates (pinning,
/// metrics) keep handling those; on Linux it ends HTTP auth challenges (see
/// `ChallengedResponses`). A session-level delegate is the one place Linux consults for
/// redirects and challenges (per-task delegates are ignored there).
final class TransportSessionDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    #if !canImport(Darwin)
    /// The 401 responses whose challenge this delegate ended, until the transport collects them.
    let challengedResponses = ChallengedResponses()
    #endif

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(RedirectSafety.sanitize(request, from: response.url ?? task.currentRequest?.url))
    }
}
