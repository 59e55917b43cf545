import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One cookie as ``PersistentCookieStorage`` keeps it: the RFC 6265 §5.3 storage model (domain
/// without a leading dot plus a host-only flag, an absolute expiry or none for a session cookie).
struct StoredCookie: Codable, Sendable, Hashable {
    var name: String
    var value: String
    /// Lower-cased, no leading dot.
    var domain: String
    /// Sent only to exactly ``domain`` (no `Domain` attribute), not to its subdomains.
    var hostOnly: Bool
    var path: String
    var secure: Bool
    var httpOnly: Bool
    var sameSite: String?
    /// `nil` for a session cookie.
    var expires: Date?
    var created: Date

    /// Identity of a cookie in a jar: a new cookie with the same one replaces it (§5.3 step 11).
    struct Key: Hashable {
        let name: String
        let domain: String
        let path: String
    }

    var key: Key { Key(name: name, domain: domain, path: path) }

    func isExpired(at now: Date) -> Bool { expires.map { $0 <= now } ?? false }

    /// Whether `other` has this cookie's name and a domain and path that overlap it (RFC 6265bis
    /// §5.7 step 16: what an insecure origin may not overwrite when this cookie is Secure).
    func shadows(_ other: StoredCookie) -> Bool {
        guard name == other.name else { return false }
        let domains =
            Self.domainMatches(host: domain, domain: other.domain) || Self.domainMatches(host: other.domain, domain: domain)
        return domains && Self.pathMatches(other.path, cookiePath: path)
    }

    /// Whether a request to `url` carries this cookie (RFC 6265 §5.4: domain, path, secure, expiry).
    func matches(_ url: URL, at now: Date) -> Bool {
        guard let host = url.host?.lowercased(), !isExpired(at: now) else { return false }
        if secure && url.scheme?.lowercased() != "https" { return false }
        let domainMatches = hostOnly ? host == domain : Self.domainMatches(host: host, domain: domain)
        return domainMatches && Self.pathMatches(Self.requestPath(url), cookiePath: path)
    }

    /// RFC 6265 §5.1.3: `host` is `domain` or ends with `.domain` (never for an IP address).
    static func domainMatches(host: String, domain: String) -> Bool {
        if host == domain { return true }
        let isAddress = host.contains(":") || host.split(separator: ".").allSatisfy { $0.allSatisfy(\.isNumber) }
        return !isAddress && host.hasSuffix("." + domain)
    }

    /// RFC 6265 §5.1.4.
    static func pathMatches(_ requestPath: String, cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return cookiePath.hasSuffix("/") || requestPath.dropFirst(cookiePath.count).first == "/"
    }

    static func requestPath(_ url: URL) -> String {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? url.path
        return path.isEmpty ? "/" : path
    }

    /// RFC 6265 §5.1.4 default-path: the request path up to (not including) its last `/`.
    static func defaultPath(_ url: URL) -> String {
        let path = requestPath(url)
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// The cookie as Foundation's type, for reading.
    var httpCookie: HTTPCookie? {
        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: name, .value: value, .path: path, .domain: hostOnly ? domain : "." + domain,
        ]
        if secure { properties[.secure] = "TRUE" }
        if let expires { properties[.expires] = expires }
        if httpOnly { properties[HTTPCookiePropertyKey("HttpOnly")] = "TRUE" }
        return HTTPCookie(properties: properties)
    }
}

/// Parses `Set-Cookie` field values into cookies to store (RFC 6265 §5.2 and §5.3).
enum SetCookieParser {
    /// The cookie a `Set-Cookie` value received from `url` asks to store, or `nil` when the value
    /// must be ignored (no `=`, empty name, a `Domain` the host does not domain-match, a `Secure`
    /// cookie from a non-`https` origin). An already expired cookie is returned: storing it deletes
    /// the one it replaces.
    static func cookie(from field: String, receivedFrom url: URL, at now: Date) -> StoredCookie? {
        guard let host = url.host?.lowercased() else { return nil }
        var parts = field.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        guard !parts.isEmpty else { return nil }
        let pair = parts.removeFirst()
        guard let equals = pair.firstIndex(of: "=") else { return nil }
        let name = pair[..<equals].trimmingCharacters(in: .whitespaces)
        let value = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        // RFC 6265bis §5.6 steps 3–5: a name or value with a control character (a CR would end
        // the header line the cookie is sent in), or larger than 4096 bytes together, is ignored.
        guard !name.isEmpty, !Self.hasControlCharacter(name), !Self.hasControlCharacter(value),
            name.utf8.count + value.utf8.count <= Self.maximumNameValueBytes
        else { return nil }

        var cookie = StoredCookie(
            name: name, value: value, domain: host, hostOnly: true, path: StoredCookie.defaultPath(url), secure: false,
            httpOnly: false, sameSite: nil, expires: nil, created: now)
        var maxAge: Date?
        var expires: Date?
        for attribute in parts {
            let pieces = attribute.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let key = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
            let argument = pieces.count > 1 ? pieces[1].trimmingCharacters(in: .whitespaces) : ""
            switch key {
            case "expires":
                if let date = CookieDate.parse(argument) { expires = date }
            case "max-age":
                guard let seconds = Int(argument) else { continue }
                maxAge =
                    seconds <= 0
                    ? Date(timeIntervalSince1970: 0) : now.addingTimeInterval(TimeInterval(min(seconds, Self.maximumLifetime)))
            case "domain":
                var domain = argument.lowercased()
                if domain.hasPrefix(".") { domain.removeFirst() }
                guard !domain.isEmpty else { continue }
                // §5.3 step 6: the host must domain-match the attribute; a single label (a TLD)
                // is never accepted as another host's domain.
                guard StoredCookie.domainMatches(host: host, domain: domain), domain == host || domain.contains(".")
                else { return nil }
                cookie.domain = domain
                cookie.hostOnly = false
            case "path":
                if argument.hasPrefix("/") { cookie.path = argument }
            case "secure":
                cookie.secure = true
            case "httponly":
                cookie.httpOnly = true
            case "samesite":
                cookie.sameSite = argument
            default:
                continue
            }
        }
        // RFC 6265bis §5.5: no cookie outlives 400 days, whatever Expires or Max-Age say.
        cookie.expires = (maxAge ?? expires).map { min($0, now.addingTimeInterval(TimeInterval(Self.maximumLifetime))) }
        // RFC 6265bis §5.7: a Secure cookie only from a secure origin.
        if cookie.secure && url.scheme?.lowercased() != "https" { return nil }
        // RFC 6265bis §4.1.3: `__Secure-` needs Secure; `__Host-` needs Secure, no Domain, Path=/.
        let lowered = name.lowercased()
        if lowered.hasPrefix("__secure-"), !cookie.secure { return nil }
        if lowered.hasPrefix("__host-"), !cookie.secure || !cookie.hostOnly || cookie.path != "/" { return nil }
        return cookie
    }

    /// The most bytes a cookie's name and value take together (RFC 6265bis §5.6).
    static let maximumNameValueBytes = 4096

    /// The longest a cookie is kept, in seconds: 400 days (RFC 6265bis §5.5).
    static let maximumLifetime = 400 * 24 * 3600

    /// Whether `text` has a character RFC 6265bis §5.6 refuses: %x00-08, %x0A-1F, %x7F (a
    /// horizontal tab is allowed).
    private static func hasControlCharacter(_ text: String) -> Bool {
        text.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }
    }
}

/// A cookie's `Expires` date, parsed with RFC 6265 §5.1.1's algorithm: the first time, day of
/// month, month and year among the tokens, in any order and with any delimiters, so the
/// IMF-fixdate, RFC 850 (`Wednesday, 21-Oct-26 07:28:00 GMT`) and asctime forms and the lenient
/// shapes servers send all parse. A two-digit year is 1970–2069 (§5.1.1 step 3); `nil` for a
/// date the algorithm fails (a field missing or out of range, a year before 1601, 30 February).
enum CookieDate {
    static func parse(_ text: String) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        for token in tokens(of: text) {
            if time == nil, let found = Self.time(token) {
                time = found
            } else if day == nil, let found = leadingDigits(token, count: 1...2) {
                day = found
            } else if month == nil, let found = Self.month(token) {
                month = found
            } else if year == nil, let found = leadingDigits(token, count: 2...4) {
                year = found
            }
        }
        guard let time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59 else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        guard let utc = TimeZone(identifier: "UTC") else { return nil }
        calendar.timeZone = utc
        let components = DateComponents(
            year: year, month: month, day: day, hour: time.hour, minute: time.minute, second: time.second)
        // 30 February and the like do not exist: the calendar would roll them over.
        guard let date = calendar.date(from: components),
            calendar.component(.day, from: date) == day, calendar.component(.month, from: date) == month
        else { return nil }
        return date
    }

    /// The date-tokens of `text`: runs of characters that are not delimiters (§5.1.1: %x09,
    /// %x20-2F, %x3B-40, %x5B-60, %x7B-7E).
    private static func tokens(of text: String) -> [Substring.UTF8View] {
        func isDelimiter(_ byte: UInt8) -> Bool {
            byte == 0x09 || (0x20...0x2F).contains(byte) || (0x3B...0x40).contains(byte) || (0x5B...0x60).contains(byte)
                || (0x7B...0x7E).contains(byte)
        }
        return text.utf8.split(whereSeparator: isDelimiter).map { Substring($0).utf8 }
    }

    /// The number made of `count` leading digits of `token`, when what follows them (if
    /// anything) starts with a non-digit.
    private static func leadingDigits(_ token: Substring.UTF8View, count: ClosedRange<Int>) -> Int? {
        let digits = token.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        guard count.contains(digits.count) else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
    }

    /// `hh:mm:ss` (one or two digits each), optionally followed by a non-digit and anything.
    private static func time(_ token: Substring.UTF8View) -> (hour: Int, minute: Int, second: Int)? {
        var values: [Int] = []
        var rest = token[...]
        for index in 0..<3 {
            let digits = rest.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
            guard (1...2).contains(digits.count) else { return nil }
            values.append(digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) })
            rest = rest.dropFirst(digits.count)
            if index < 2 {
                guard rest.first == UInt8(ascii: ":") else { return nil }
                rest = rest.dropFirst()
            }
        }
        if let next = rest.first, next >= UInt8(ascii: "0"), next <= UInt8(ascii: "9") { return nil }
        return (values[0], values[1], values[2])
    }

    /// The month a token starts with (`jan`…`dec`, any case), 1…12.
    private static func month(_ token: Substring.UTF8View) -> Int? {
        guard token.count >= 3 else { return nil }
        let name = String(decoding: token.prefix(3), as: UTF8.self).lowercased()
        return ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"].firstIndex(of: name)
            .map { $0 + 1 }
    }
}
