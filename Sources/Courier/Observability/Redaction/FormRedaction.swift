/// Redaction of `name=value` lists: `application/x-www-form-urlencoded` bodies (WHATWG URL
/// Standard §5) and URL queries (RFC 3986 §3.4). Works on the encoded text, so everything that is
/// not a redacted value is kept exactly as it was sent.
enum FormRedaction {
    /// Replaces the value of every pair whose (decoded) name is in `names` with `marker`.
    ///
    /// - Parameters:
    ///   - encoded: Pairs joined by `&`, names and values percent-encoded, `+` for space.
    ///   - secrets: Receives each replaced value, percent-decoded.
    /// - Returns: The same text with redacted values; pairs without `=` are kept.
    static func redact(_ encoded: String, names: RedactionList, marker: String, secrets: inout [String]) -> String {
        guard encoded.contains("=") else { return encoded }
        let pairs = encoded.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = pair[..<equals]
            guard names.matches(decode(name)) else { return String(pair) }
            let value = pair[pair.index(after: equals)...]
            secrets.append(String(value))
            secrets.append(decode(value))
            return name + "=" + marker
        }
        return pairs.joined(separator: "&")
    }

    /// Form decoding of one name or value: `+` is a space, then percent-decoding; text that is not
    /// valid percent-encoding is returned as written.
    static func decode(_ component: Substring) -> String {
        let spaced = component.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// Redacts a URL given as text: query and fragment pairs by name, and the password of a
    /// `user:password@` authority (RFC 3986 §3.2.1 deprecates it; it must still never be logged).
    static func redactURL(_ text: String, names: RedactionList, marker: String, secrets: inout [String]) -> String {
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
            result += "?" + redact(String(query), names: names, marker: marker, secrets: &secrets)
        }
        if let fragment {
            result += "#" + redact(String(fragment), names: names, marker: marker, secrets: &secrets)
        }
        return result
    }

    private static func redactUserInfo(_ prefix: Substring, marker: String, secrets: inout [String]) -> String {
        guard let schemeEnd = prefix.range(of: "://") else { return String(prefix) }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = prefix[authorityStart...].firstIndex(of: "/") ?? prefix.endIndex
        let authority = prefix[authorityStart..<authorityEnd]
        guard let at = authority.lastIndex(of: "@") else { return String(prefix) }
        let userInfo = authority[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return String(prefix) }
        let password = userInfo[userInfo.index(after: colon)...]
        secrets.append(String(password))
        secrets.append(decode(password))
        return prefix[..<userInfo.index(after: colon)] + marker + prefix[at...]
    }
}
