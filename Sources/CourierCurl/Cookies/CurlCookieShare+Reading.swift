#if canImport(CCurl)
import CCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension CurlCookieShare {
    /// Every cookie in the share, read through a throwaway easy handle attached to it
    /// (`CURLINFO_COOKIELIST`: one Netscape cookie-file line per cookie). Lines libcurl writes in
    /// another shape are skipped.
    func allCookies() -> [HTTPCookie] {
        guard let handle = curl_easy_init() else { return [] }
        defer { curl_easy_cleanup(handle) }
        guard ccurl_easy_setopt_pointer(handle, CURLOPT_SHARE, share) == CURLE_OK else { return [] }
        var raw: UnsafeMutableRawPointer?
        guard ccurl_easy_getinfo_pointer(handle, CURLINFO_COOKIELIST, &raw) == CURLE_OK, let raw else { return [] }
        let list = raw.assumingMemoryBound(to: curl_slist.self)
        defer { curl_slist_free_all(list) }
        var cookies: [HTTPCookie] = []
        var node: UnsafeMutablePointer<curl_slist>? = list
        while let current = node {
            if let text = current.pointee.data, let cookie = Self.cookie(fromNetscapeLine: String(cString: text)) {
                cookies.append(cookie)
            }
            node = current.pointee.next
        }
        return cookies
    }

    /// A cookie from a Netscape cookie-file line: domain, include-subdomains flag, path, secure
    /// flag, expiry (Unix seconds, 0 for a session cookie), name, value — tab-separated; a domain
    /// prefixed `#HttpOnly_` marks an HttpOnly cookie. `nil` for any other shape.
    static func cookie(fromNetscapeLine line: String) -> HTTPCookie? {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        guard fields.count >= 7, let expiry = Int64(fields[4]) else { return nil }
        var domain = fields[0]
        let httpOnly = domain.hasPrefix("#HttpOnly_")
        if httpOnly { domain.removeFirst("#HttpOnly_".count) }
        guard !domain.isEmpty, !domain.hasPrefix("#") else { return nil }
        var properties: [HTTPCookiePropertyKey: Any] = [
            .domain: fields[1] == "TRUE" && !domain.hasPrefix(".") ? "." + domain : domain,
            .path: fields[2],
            .name: fields[5],
            .value: fields[6...].joined(separator: "\t"),
        ]
        if fields[3] == "TRUE" { properties[.secure] = "TRUE" }
        if expiry > 0 { properties[.expires] = Date(timeIntervalSince1970: TimeInterval(expiry)) }
        if httpOnly { properties[HTTPCookiePropertyKey("HttpOnly")] = "TRUE" }
        return HTTPCookie(properties: properties)
    }
}
#endif
