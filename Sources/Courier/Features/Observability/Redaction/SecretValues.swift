import Foundation

/// Secret values seen while redacting one call — the values behind redacted headers, query
/// parameters and body fields — so they can also be removed wherever else they show up: a server
/// echoing the request back, a token repeated in a non-sensitive header, an error message.
///
/// Redaction by name hides `Authorization: Bearer abc`; scrubbing by value also hides `abc` in a
/// response body such as `{"headers": [["Authorization", "Bearer abc"]]}`, where no key gives it
/// away. Values shorter than ``Redactor/minimumSecretLength`` are not scrubbed (they would blank
/// out unrelated text), and JSON literals `true`/`false`/`null` never are.
struct SecretValues: Sendable, Hashable {
    private(set) var values: Set<String> = []

    /// `true` when nothing was learned.
    var isEmpty: Bool { values.isEmpty }

    /// How many values were learned (spellings counted apart).
    var count: Int { values.count }

    /// Remembers `value` (and its percent-decoded and JSON-escaped spellings) if long enough.
    mutating func insert(_ value: String, minimumLength: Int) {
        let trimmed = value.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.count >= max(1, minimumLength), !["true", "false", "null"].contains(trimmed) else { return }
        values.insert(trimmed)
        if let decoded = trimmed.replacingOccurrences(of: "+", with: " ").removingPercentEncoding,
            decoded != trimmed, decoded.count >= max(1, minimumLength)
        {
            values.insert(decoded)
        }
        let escaped = JSONRedaction.escape(trimmed)
        if escaped != trimmed { values.insert(escaped) }
        // Some JSON writers (JSONSerialization on Apple platforms) escape "/" as "\/".
        if escaped.contains("/") { values.insert(escaped.replacingOccurrences(of: "/", with: "\\/")) }
    }

    /// Merges another set of learned values.
    mutating func formUnion(_ other: SecretValues) {
        values.formUnion(other.values)
    }

    /// Learns the secret parts of a sensitive header's value.
    ///
    /// - `Authorization` / `Proxy-Authorization`: the whole value and the credentials after the
    ///   scheme (RFC 9110 §11.4); for `Basic`, also the decoded `user:password` and the password.
    /// - `Cookie`: each cookie value (RFC 6265 §4.2), a nameless cookie's whole text. `Set-Cookie`:
    ///   the cookie value (RFC 6265 §4.1).
    /// - Anything else: the whole value, and the part after a scheme-like first word.
    mutating func learnHeader(name: String, value: String, minimumLength: Int) {
        let lowered = name.lowercased()
        if lowered == "cookie" {
            for pair in value.split(separator: ";") {
                insert(Self.cookieValue(of: pair), minimumLength: minimumLength)
            }
            return
        }
        if lowered == "set-cookie" {
            if let first = value.split(separator: ";", maxSplits: 1).first {
                insert(Self.cookieValue(of: first), minimumLength: minimumLength)
            }
            return
        }
        insert(value, minimumLength: minimumLength)
        let parts = value.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2 else { return }
        let credentials = String(parts[1])
        insert(credentials, minimumLength: minimumLength)
        if parts[0].lowercased() == "basic",
            let data = Data(base64Encoded: credentials.trimmingCharacters(in: .whitespaces)),
            let decoded = String(data: data, encoding: .utf8)
        {
            insert(decoded, minimumLength: minimumLength)
            if let colon = decoded.firstIndex(of: ":") {
                insert(String(decoded[decoded.index(after: colon)...]), minimumLength: minimumLength)
            }
        }
    }

    /// The value of a `name=value` pair; a pair without `=` is a nameless cookie, all value (RFC
    /// 6265bis §5.6), as the `Cookie` and `Set-Cookie` fields hide it.
    private static func cookieValue(of pair: Substring) -> String {
        guard let equals = pair.firstIndex(of: "=") else { return pair.trimmingCharacters(in: .whitespaces) }
        var value = pair[pair.index(after: equals)...].trimmingCharacters(in: .whitespaces)
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
            value = String(value.dropFirst().dropLast())
        }
        return value
    }

    /// Replaces every occurrence of a learned value in `text` with `marker`, longest values first
    /// (so a value that contains another is replaced whole).
    func scrub(_ text: String, marker: String) -> String {
        guard !values.isEmpty, !text.isEmpty else { return text }
        var result = text
        for value in values.sorted(by: { $0.count > $1.count }) where result.contains(value) {
            result = result.replacingOccurrences(of: value, with: marker)
        }
        return result
    }

    /// Removes a trailing part of `text` that is the beginning of a learned value — what is left
    /// when a preview is cut in the middle of a secret.
    func trimTrailingPartial(_ text: String) -> String {
        guard !values.isEmpty, !text.isEmpty else { return text }
        var cut = 0
        for value in values {
            var length = min(value.count, text.count)
            // A full occurrence was already scrubbed; look for proper prefixes only.
            if length == value.count { length -= 1 }
            while length > cut {
                if text.hasSuffix(value.prefix(length)) {
                    cut = length
                    break
                }
                length -= 1
            }
        }
        return cut == 0 ? text : String(text.dropLast(cut))
    }
}
