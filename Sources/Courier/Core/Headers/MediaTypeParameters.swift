import Foundation

/// Parameters of a media type field value such as `Content-Type` (RFC 9110 §5.6.6, §8.3.1).
package enum MediaTypeParameters {
    /// The value of the parameter `name` (any case) in `fieldValue`, unquoted (RFC 9110 §5.6.4
    /// backslash escapes undone) with its case kept; `nil` when absent or empty.
    ///
    /// `multipart/form-data; boundary="a;b"` → `a;b` for `boundary`: a `;` inside a quoted string
    /// does not end the parameter.
    package static func value(of name: String, in fieldValue: String) -> String? {
        let pieces = QuotedStringSplitting.split(fieldValue, on: ";").pieces.dropFirst()
        for piece in pieces {
            let pair = piece.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard pair.count == 2, pair[0].lowercased() == name.lowercased() else { continue }
            var value = pair[1]
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                var unescaped = ""
                var escaped = false
                for character in value.dropFirst().dropLast() {
                    if !escaped, character == "\\" {
                        escaped = true
                        continue
                    }
                    escaped = false
                    unescaped.append(character)
                }
                value = unescaped
            }
            return value.isEmpty ? nil : value
        }
        return nil
    }
}
