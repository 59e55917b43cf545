import Foundation

/// One challenge of a `WWW-Authenticate` (or `Proxy-Authenticate`) field, parsed per RFC 9110
/// §11.6.1 and §11.2: an auth scheme followed by either a `token68` or a list of `name=value`
/// parameters.
///
/// A field may hold several challenges, and a response may carry several fields; scheme and
/// parameter names are case-insensitive, values are tokens or quoted strings (`\"` and `\\`
/// escapes undone). Read them from an error with ``FailedResponse/challenges``:
///
/// ```swift
/// do {
///     _ = try await client.send(GetItem(id: 42))
/// } catch let error as NetworkError {
///     if let bearer = error.failedResponse?.challenges.first(where: { $0.scheme == "Bearer" }),
///        bearer["error"] == "insufficient_scope" {
///         requestScope(bearer["scope"])                 // RFC 6750 §3.1
///     }
/// }
/// ```
public struct AuthenticationChallenge: Sendable, Hashable, CustomStringConvertible {
    /// The auth scheme as sent, e.g. `Bearer`, `Basic`. Compare with ``isScheme(_:)`` (case-insensitive).
    public var scheme: String
    /// The `token68` form of the challenge's data, when it used one (rare; e.g. `Negotiate abc==`).
    public var token68: String?
    /// The parameters, names lower-cased (RFC 9110 §11.2), values unquoted. A repeated name keeps
    /// its first value.
    public var parameters: [String: String]

    /// Creates a challenge.
    public init(scheme: String, token68: String? = nil, parameters: [String: String] = [:]) {
        self.scheme = scheme
        self.token68 = token68
        self.parameters = parameters
    }

    /// The value of the parameter `name` (case-insensitive), e.g. `challenge["error"]`.
    public subscript(_ name: String) -> String? { parameters[name.lowercased()] }

    /// Whether the challenge's scheme is `name`, ignoring case (RFC 9110 §11.1).
    public func isScheme(_ name: String) -> Bool { scheme.caseInsensitiveCompare(name) == .orderedSame }

    public var description: String {
        let params = parameters.keys.sorted().map { "\($0)=\"\(parameters[$0] ?? "")\"" }
        return ([scheme] + (token68.map { [$0] } ?? []) + [params.joined(separator: ", ")])
            .filter { !$0.isEmpty }.joined(separator: " ")
    }

    /// Every challenge in the `WWW-Authenticate` fields of `headers`, in order.
    package static func challenges(in headers: HTTPHeaders, field: String = "WWW-Authenticate") -> [AuthenticationChallenge] {
        headers.values(for: field).flatMap(parse)
    }

    /// The challenges in one field value. Malformed parts are skipped, never guessed at.
    package static func parse(_ value: String) -> [AuthenticationChallenge] {
        var scanner = ChallengeScanner(Array(value.utf8))
        return scanner.challenges()
    }
}

/// A byte scanner for the RFC 9110 §11.6.1 challenge grammar.
private struct ChallengeScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func challenges() -> [AuthenticationChallenge] {
        var result: [AuthenticationChallenge] = []
        while true {
            skip { $0 == UInt8(ascii: ",") || Self.isWhitespace($0) }
            guard index < bytes.count else { return result }
            guard let scheme = token() else {
                skipPastComma()
                continue
            }
            var challenge = AuthenticationChallenge(scheme: scheme)
            skip(Self.isWhitespace)
            if let token68 = token68() {
                challenge.token68 = token68
            } else {
                parameters(into: &challenge)
            }
            result.append(challenge)
        }
    }

    /// `#auth-param` of the current challenge: stops before a list element that is not `name=`.
    private mutating func parameters(into challenge: inout AuthenticationChallenge) {
        while index < bytes.count {
            let start = index
            guard let name = token() else {
                index = start
                return
            }
            skip(Self.isWhitespace)
            guard peek == UInt8(ascii: "=") else {
                index = start
                return
            }  // the next challenge's scheme
            index += 1
            skip(Self.isWhitespace)
            guard let value = peek == UInt8(ascii: "\"") ? quotedString() : token() else {
                skipPastComma()
                continue
            }
            let key = name.lowercased()
            if challenge.parameters[key] == nil { challenge.parameters[key] = value }
            skip(Self.isWhitespace)
            guard peek == UInt8(ascii: ",") else {
                if index < bytes.count { skipPastComma() }
                continue
            }
            // Commas separate parameters and challenges alike; empty elements are allowed.
            skip { $0 == UInt8(ascii: ",") || Self.isWhitespace($0) }
        }
    }

    /// `token68` followed by the end of the challenge (end of input or a comma), else `nil`.
    private mutating func token68() -> String? {
        let start = index
        while index < bytes.count, Self.isToken68Byte(bytes[index]) { index += 1 }
        guard index > start else { return nil }
        while index < bytes.count, bytes[index] == UInt8(ascii: "=") { index += 1 }
        let end = index
        skip(Self.isWhitespace)
        guard index == bytes.count || bytes[index] == UInt8(ascii: ",") else {
            index = start
            return nil
        }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }

    private mutating func token() -> String? {
        let start = index
        while index < bytes.count, HTTPHeaders.isTokenByte(bytes[index]) { index += 1 }
        return index > start ? String(decoding: bytes[start..<index], as: UTF8.self) : nil
    }

    /// RFC 9110 §5.6.4 `quoted-string`, with `quoted-pair` escapes undone; `nil` when unterminated.
    private mutating func quotedString() -> String? {
        let start = index
        index += 1
        var value: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: value, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                index += 1
            }
            value.append(bytes[index])
            index += 1
        }
        index = start
        return nil
    }

    private var peek: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skip(_ predicate: (UInt8) -> Bool) {
        while index < bytes.count, predicate(bytes[index]) { index += 1 }
    }

    /// Skips a malformed element up to the next comma outside a quoted string.
    private mutating func skipPastComma() {
        var quoted = false
        while index < bytes.count {
            let byte = bytes[index]
            if quoted, byte == UInt8(ascii: "\\") {
                index += 2
                continue
            }
            if byte == UInt8(ascii: "\"") { quoted.toggle() }
            if !quoted, byte == UInt8(ascii: ",") { return }
            index += 1
        }
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }

    /// RFC 9110 §11.2 `token68` characters (before the `=` padding).
    private static func isToken68Byte(_ byte: UInt8) -> Bool {
        byte.isASCIIAlphanumeric || "-._~+/".utf8.contains(byte)
    }
}
