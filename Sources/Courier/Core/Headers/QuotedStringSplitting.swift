/// Splits a field value on a delimiter that may also stand inside quoted strings (RFC 9110
/// §5.6.4): `no-cache="a, b", max-age=0` holds two list members, not three.
package enum QuotedStringSplitting {
    /// The pieces of `text` between the `separator`s that stand outside quoted strings, as written
    /// (not trimmed; quotes and backslash escapes kept), and whether `text` ends inside a quoted
    /// string (then the last piece runs to the end).
    package static func split(_ text: String, on separator: Character) -> (pieces: [String], unterminatedQuote: Bool) {
        var pieces: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for character in text {
            if escaped {
                escaped = false
            } else if quoted, character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == separator, !quoted {
                pieces.append(current)
                current = ""
                continue
            }
            current.append(character)
        }
        pieces.append(current)
        return (pieces, quoted)
    }
}
