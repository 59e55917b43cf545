import Foundation

/// Renders a Codable coding path as a compact, JavaScript-like accessor
/// string for diagnostics, e.g. `items[1].name`.
///
/// Rules:
/// - a key with an `intValue` (array index) renders as `[n]`;
/// - a string key renders as `.key` (without the dot when it is first);
/// - a string key that is empty or contains `.`, `[`, `]`, `"` or whitespace
///   renders as `["key"]` (with `"` and `\` escaped) so the result stays
///   unambiguous;
/// - an empty path renders as `<root>`.
///
/// The output is intended for humans and logs; it is not a standardised
/// syntax (it resembles, but is not, RFC 9535 JSONPath without the `$`).
package enum CodingPathFormatter {
    /// The text shown for an empty coding path (the top-level value).
    package static let rootDescription = "<root>"

    /// Formats `path` according to the rules above.
    ///
    /// - Parameter path: Keys from outermost to innermost, as found in
    ///   `DecodingError.Context.codingPath` or `Encoder.codingPath`.
    /// - Returns: For example `items[1].name`, `[0].id`, or `<root>`.
    package static func string(_ path: [any CodingKey]) -> String {
        guard !path.isEmpty else { return rootDescription }
        var result = ""
        for key in path {
            if let index = key.intValue {
                result += "[\(index)]"
            } else if needsBrackets(key.stringValue) {
                result += "[\"\(escaped(key.stringValue))\"]"
            } else {
                result += result.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return result
    }

    private static func needsBrackets(_ key: String) -> Bool {
        key.isEmpty || key.contains { $0 == "." || $0 == "[" || $0 == "]" || $0 == "\"" || $0.isWhitespace }
    }

    private static func escaped(_ key: String) -> String {
        key.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
    }
}
