import Foundation
import Courier
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CurlTransport {
    /// The cookies this transport holds now (RFC 6265), a snapshot — the counterpart of
    /// `URLSessionTransport.cookieStorage` for reading. They live in the transport's own libcurl
    /// share handle, never shared with another transport; `resetSession()` forgets them. Empty when
    /// `httpShouldSetCookies` is off.
    public var storedCookies: [HTTPCookie] { cookies?.allCookies() ?? [] }

    /// The stored cookies that a request to `url` would carry: the domain matches the host
    /// (exactly, or as a parent domain for a domain cookie), the path is a prefix of the URL's path,
    /// and a secure cookie only over https (RFC 6265 §5.4). Expired cookies are never included.
    ///
    /// - Parameter url: An absolute http(s) URL.
    /// - Returns: The matching cookies, longest path first.
    public func cookies(for url: URL) -> [HTTPCookie] {
        guard let host = url.host?.lowercased() else { return [] }
        let path = url.path.isEmpty ? "/" : url.path
        let secure = url.scheme?.lowercased() == "https"
        let now = Date()
        return storedCookies.filter { cookie in
            let domain = cookie.domain.lowercased()
            let domainMatches =
                domain.hasPrefix(".")
                ? host == domain.dropFirst() || host.hasSuffix(domain) : host == domain
            let pathMatches =
                path == cookie.path || path.hasPrefix(cookie.path.hasSuffix("/") ? cookie.path : cookie.path + "/")
                || cookie.path == "/"
            let expired = cookie.expiresDate.map { $0 <= now } ?? false
            return domainMatches && pathMatches && (!cookie.isSecure || secure) && !expired
        }
        .sorted { $0.path.count > $1.path.count }
    }
}

extension CurlTransport: CookieHandlingTransport {
    /// Whether this transport keeps cookies in its own libcurl share
    /// (``Configuration/httpShouldSetCookies``); must be `false` under a `CookieStoringTransport`.
    package var handlesCookies: Bool { cookies != nil }
}
