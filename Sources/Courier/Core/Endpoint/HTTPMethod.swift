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

    /// GET: read a resource (RFC 9110 §9.3.1); safe and idempotent.
    public static let get: HTTPMethod = "GET"
    /// HEAD: GET without the body (RFC 9110 §9.3.2); safe and idempotent.
    public static let head: HTTPMethod = "HEAD"
    /// POST: process the enclosed body (RFC 9110 §9.3.3); neither safe nor idempotent.
    public static let post: HTTPMethod = "POST"
    /// PUT: replace the resource with the body (RFC 9110 §9.3.4); idempotent.
    public static let put: HTTPMethod = "PUT"
    /// PATCH: apply a partial modification (RFC 5789); not idempotent.
    public static let patch: HTTPMethod = "PATCH"
    /// DELETE: remove the resource (RFC 9110 §9.3.5); idempotent.
    public static let delete: HTTPMethod = "DELETE"
    /// OPTIONS: describe the communication options (RFC 9110 §9.3.7); safe and idempotent.
    public static let options: HTTPMethod = "OPTIONS"
    /// TRACE: loop-back test (RFC 9110 §9.3.8); safe and idempotent.
    public static let trace: HTTPMethod = "TRACE"

    /// `true` for methods whose semantics are read-only: GET, HEAD, OPTIONS, TRACE (RFC 9110 §9.2.1).
    public var isSafe: Bool { ["GET", "HEAD", "OPTIONS", "TRACE"].contains(rawValue) }

    /// `true` for methods a client may repeat without changing the outcome: the safe methods plus
    /// PUT and DELETE (RFC 9110 §9.2.2). POST and PATCH are not idempotent.
    public var isIdempotent: Bool { isSafe || rawValue == "PUT" || rawValue == "DELETE" }

    public var description: String { rawValue }
}
