/// An HTTP request method (RFC 9110 §9).
///
/// A struct rather than an enum so that extension methods (`PROPFIND`, `QUERY`) can be expressed
/// without a library change: `HTTPMethod(rawValue: "QUERY")`.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The method token exactly as sent on the wire, e.g. `"GET"`.
    public let rawValue: String

    /// Creates a method from its token; the token is upper-cased.
    public init(rawValue: String) { self.rawValue = rawValue.uppercased() }
    /// Creates a method from a string literal such as `"GET"`.
    public init(stringLiteral value: String) { self.init(rawValue: value) }

    public static let get: HTTPMethod = "GET"
    public static let head: HTTPMethod = "HEAD"
    public static let post: HTTPMethod = "POST"
    public static let put: HTTPMethod = "PUT"
    public static let patch: HTTPMethod = "PATCH"
    public static let delete: HTTPMethod = "DELETE"
    public static let options: HTTPMethod = "OPTIONS"
    public static let trace: HTTPMethod = "TRACE"

    /// `true` for methods whose semantics are read-only: GET, HEAD, OPTIONS, TRACE (RFC 9110 §9.2.1).
    public var isSafe: Bool { ["GET", "HEAD", "OPTIONS", "TRACE"].contains(rawValue) }

    /// `true` for methods a client may repeat without changing the outcome: the safe methods plus
    /// PUT and DELETE (RFC 9110 §9.2.2). POST and PATCH are not idempotent.
    public var isIdempotent: Bool { isSafe || rawValue == "PUT" || rawValue == "DELETE" }

    public var description: String { rawValue }
}
