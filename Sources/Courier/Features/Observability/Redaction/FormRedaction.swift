import Foundation

/// Redaction of `name=value` lists: `application/x-www-form-urlencoded` bodies (WHATWG URL
/// Standard §5) and URL queries (RFC 3986 §3.4). Works on the encoded text, so everything that is
/// not a redacted value is kept exactly as it was sent.
enum FormRedaction {
    /// Replaces the value of every pair whose (decoded) name is in `names` with `marker`.
    ///
    /// - Parameters:
    ///   - encoded: Pairs joined by `&`, names and values percent-encoded, `+` for space.
    ///   - json: When given, a value that is JSON text (an object or array, such as a GraphQL GET's
    ///     `variables`) is redacted like a JSON body: its sensitive members at any depth.
    ///   - secrets: Receives each replaced value, percent-decoded.
    /// - Returns: The same text with redacted values; pairs without `=` are kept.
    static func redact(
        _ encoded: String, names: RedactionList, json: JSONRedaction? = nil, marker: String, secrets: inout [String]
    ) -> String {
        guard encoded.contains("=") else { return encoded }
        let pairs = encoded.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = pair[..<equals]
            let value = pair[pair.index(after: equals)...]
            guard names.matches(decode(name)) else {
                guard let json, let redacted = redactJSON(value, json: json, secrets: &secrets) else { return String(pair) }
                return name + "=" + redacted
            }
            secrets.append(String(value))
            secrets.append(decode(value))
            return name + "=" + marker
        }
        return pairs.joined(separator: "&")
    }

    /// The value redacted as JSON and percent-encoded again (the marker left readable), or `nil`
    /// when it is not a JSON object or array or has nothing to redact.
    private static func redactJSON(_ value: Substring, json: JSONRedaction, secrets: inout [String]) -> String? {
        let decoded = decode(value)
        guard let first = decoded.first(where: { !$0.isWhitespace }), first == "{" || first == "[" else { return nil }
        let input = Array(decoded.utf8)
        let result = json.redact(input)
        guard result.output != input else { return nil }
        secrets.append(contentsOf: result.secrets)
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+#")
        let text = String(decoding: result.output, as: UTF8.self)
        let encoded = text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
        let encodedMarker = json.marker.addingPercentEncoding(withAllowedCharacters: allowed) ?? json.marker
        return encoded.replacingOccurrences(of: encodedMarker, with: json.marker)
    }

    /// Form decoding of one name or value: `+` is a space, then percent-decoding; text that is not
    /// valid percent-encoding is returned as written.
    static func decode(_ component: Substring) -> String {
        let spaced = component.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// Redacts a URL given as text: query and fragment pairs by name (and JSON-valued query
    /// parameters by member name when `json` is given), and the password of a
    /// `user:password@` authority (RFC 3986 §3.2.1 deprecates it; it must still never be logged).
    static func redactURL(
        _ text: String, names: RedactionList, json: JSONRedaction? = nil, marker: String, secrets: inout [String]
    ) -> String {
        // Nothing to redact without a query, a fragment or user info: the common case, decided on
        // the bytes (these ASCII bytes never occur inside a multi-byte character).
        let special: (UInt8) -> Bool = { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") || $0 == UInt8(ascii: "@") }
        guard text.utf8.contains(where: special) else { return text }
        var rest = Substring(text)
        var fragment: Substring?
        if let hash = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: hash)...]
            rest = rest[..<hash]
        }
        var query: Substring?
        if let question = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: question)...]
            rest = rest[..<question]
        }
        var result = redactUserInfo(rest, marker: marker, secrets: &secrets)
        if let query {
            result += "?" + redact(String(query), names: names, json: json, marker: marker, secrets: &secrets)
        }
        if let fragment {
            result += "#" + redact(String(fragment), names: names, marker: marker, secrets: &secrets)
        }
        return result
    }

    /// The index just past the first `://` in `text` (without Foundation's `range(of:)`).
    private static func schemeEnd(in text: Substring) -> Substring.Index? {
        var rest = text
        while let colon = rest.firstIndex(of: ":") {
            let after = text[colon...]
            if after.hasPrefix("://") { return text.index(colon, offsetBy: 3) }
            rest = text[text.index(after: colon)...]
        }
        return nil
    }

    private static func redactUserInfo(_ prefix: Substring, marker: String, secrets: inout [String]) -> String {
        guard let authorityStart = schemeEnd(in: prefix) else { return String(prefix) }
        let authorityEnd = prefix[authorityStart...].firstIndex(of: "/") ?? prefix.endIndex
        let authority = prefix[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return String(prefix) }
        let userInfo = authority[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else {
            // A user name alone is often a token (`https://ghp_…@host`, git-style): hidden too.
            secrets.append(String(userInfo))
            secrets.append(decode(userInfo))
            return prefix[..<authorityStart] + marker + prefix[at...]
        }
        let password = userInfo[userInfo.index(after: colon)...]
        secrets.append(String(password))
        secrets.append(decode(password))
        return prefix[..<userInfo.index(after: colon)] + marker + prefix[at...]
    }
}
