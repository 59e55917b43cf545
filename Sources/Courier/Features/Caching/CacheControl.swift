import Foundation

/// The directives of a `Cache-Control` header field (RFC 9111 §5.2), parsed once.
///
/// Directive names are case-insensitive; arguments may be tokens or quoted strings, joined to the
/// name by an "=" without whitespace around it (`max-age = 60` has an invalid argument). A directive
/// repeated with different arguments keeps its first value; an invalid delta-seconds argument is
/// treated as absent for lifetimes and as `0` for `max-age` (RFC 9111 §4.2.1: a cache should treat
/// an invalid freshness as stale). Unknown directives are kept in ``directives``.
struct CacheControl: Sendable, Hashable {
    /// Every directive by lower-cased name; the value is the argument without quotes, `nil` when none.
    private(set) var directives: [String: String?] = [:]

    /// Parses every `Cache-Control` field of `headers` (repeated fields are combined, §5.2).
    init(_ headers: HTTPHeaders) {
        for value in headers.cacheValues("cache-control") { parse(value) }
    }

    /// Parses one field value, e.g. `max-age=60, must-revalidate`.
    init(_ value: String) { parse(value) }

    private mutating func parse(_ value: String) {
        for item in Self.split(value) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = HeaderScanning.trim(parts[0]).lowercased()
            guard !name.isEmpty, directives[name] == nil else { continue }
            var argument: String?
            if parts.count == 2, parts[0].last?.isWhitespace == true || parts[1].first?.isWhitespace == true {
                // §5.2: `token [ "=" ( token / quoted-string ) ]`, no whitespace around "=":
                // `max-age = 60` carries no valid argument (so no freshness from it).
                argument = ""
            } else if parts.count == 2 {
                var text = String(HeaderScanning.trim(parts[1]))
                if text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") {
                    text = String(text.dropFirst().dropLast())
                }
                argument = text
            }
            directives[name] = .some(argument)
        }
    }

    /// Splits on commas that are not inside quoted strings (`no-cache="a, b"` stays one item).
    private static func split(_ value: String) -> [String] {
        QuotedStringSplitting.split(value, on: ",").pieces.map { String(HeaderScanning.trim($0)) }.filter { !$0.isEmpty }
    }

    /// `true` when the directive `name` (lower-case) is present, with or without an argument.
    func has(_ name: String) -> Bool { directives[name] != nil }

    /// The directive's delta-seconds argument (RFC 9111 §1.2.2): `nil` when absent or not a
    /// non-negative integer; values too large for `Int` saturate at 2^31 as the RFC recommends.
    func seconds(_ name: String) -> Int? {
        guard let entry = directives[name], let text = entry, !text.isEmpty,
            text.allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        return Int(text).map { min($0, 2_147_483_648) } ?? 2_147_483_648
    }

    /// `true` when `name` is present but its argument is missing or not valid delta-seconds.
    func hasInvalidSeconds(_ name: String) -> Bool { has(name) && seconds(name) == nil }

    // MARK: Response directives (RFC 9111 §5.2.2, RFC 5861)

    /// `no-store` (§5.2.2.5 / §5.2.1.5).
    var noStore: Bool { has("no-store") }
    /// `no-cache`, qualified or not (§5.2.2.4): every reuse must be validated first. A qualified
    /// `no-cache="field"` is treated as unqualified, which the RFC allows.
    var noCache: Bool { has("no-cache") }
    /// `must-revalidate` (§5.2.2.2): once stale, never served without successful validation.
    var mustRevalidate: Bool { has("must-revalidate") }
    /// `public` (§5.2.2.9).
    var isPublic: Bool { has("public") }
    /// `private` (§5.2.2.7); allowed here, since Courier's cache is private.
    var isPrivate: Bool { has("private") }
    /// `max-age` in seconds (§5.2.2.1 / §5.2.1.1).
    var maxAge: Int? { seconds("max-age") }
    /// `s-maxage` (§5.2.2.10); ignored for freshness by a private cache, but it counts as an
    /// explicit permission to store an authorized response (§3.5).
    var sharedMaxAge: Int? { seconds("s-maxage") }
    /// `stale-while-revalidate` window in seconds (RFC 5861 §3).
    var staleWhileRevalidate: Int? { seconds("stale-while-revalidate") }
    /// `stale-if-error` window in seconds (RFC 5861 §4), in a request or a response.
    var staleIfError: Int? { seconds("stale-if-error") }

    // MARK: Request directives (RFC 9111 §5.2.1)

    /// `max-stale`: `.some(nil)` accepts any staleness, `.some(n)` at most `n` seconds, `nil` absent.
    var maxStale: Int?? {
        guard has("max-stale") else { return nil }
        return .some(seconds("max-stale"))
    }
    /// `min-fresh` in seconds.
    var minFresh: Int? { seconds("min-fresh") }
    /// `only-if-cached` (§5.2.1.7).
    var onlyIfCached: Bool { has("only-if-cached") }
}
