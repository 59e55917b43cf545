import Foundation

/// Expands `{name}` placeholders of an endpoint path (``Endpoint/pathValues``) so that each value
/// is exactly one segment (RFC 3986 §3.3) and is percent-encoded exactly once.
enum PathTemplate {
    /// The percent-encoded segments of `rawSegments`, placeholders replaced by their values.
    ///
    /// Every `{` opens a placeholder, also when `values` is empty: a `{name}` left unfilled is
    /// refused rather than sent as the literal text `%7Bname%7D`.
    ///
    /// - Throws: ``NetworkError/invalidRequest(_:)`` for a placeholder without a value (whether or
    ///   not any values were given), a value without a placeholder, an unterminated `{`, or a
    ///   whole-segment value that is empty, `.` or `..` (it could not arrive as one segment holding
    ///   that value).
    static func encodedSegments(
        _ rawSegments: [Substring], values: [String: String], path: String
    ) throws -> [String] {
        // The common case, a path without placeholders and no values, skips the expansion.
        if values.isEmpty, !rawSegments.contains(where: { $0.contains("{") }) {
            return rawSegments.map { PercentEncoding.encodePathSegment(String($0)) }
        }
        var used = Set<String>()
        let segments = try rawSegments.map { segment -> String in
            var encoded = ""
            var expanded = ""  // the segment as the server reads it back (decoded)
            var rest = segment[...]
            while let open = rest.firstIndex(of: "{") {
                encoded += PercentEncoding.encodePathSegment(String(rest[..<open]))
                expanded += rest[..<open]
                guard let close = rest[open...].firstIndex(of: "}") else {
                    throw NetworkError.invalidRequest("path '\(path)' has an unterminated '{' placeholder")
                }
                let name = String(rest[rest.index(after: open)..<close])
                guard let value = values[name] else {
                    throw NetworkError.invalidRequest("path '\(path)' has no value for placeholder '{\(name)}'")
                }
                if segment.count == name.count + 2, value.isEmpty || value == "." || value == ".." {
                    throw NetworkError.invalidRequest(
                        "the value of '{\(name)}' in '\(path)' cannot be a path segment (empty, '.' or '..')")
                }
                used.insert(name)
                encoded += PercentEncoding.encodePathSegment(value)
                expanded += value
                rest = rest[rest.index(after: close)...]
            }
            expanded += rest
            // Values that together make a dot segment (`{name}.{ext}` with "." and "") would be
            // removed by URL resolution (RFC 3986 §5.2.4), as a whole one would.
            if expanded.isEmpty || expanded == "." || expanded == ".." {
                throw NetworkError.invalidRequest(
                    "the values in '\(segment)' of '\(path)' make a segment that is empty, '.' or '..'")
            }
            return encoded + PercentEncoding.encodePathSegment(String(rest))
        }
        if let unused = values.keys.sorted().first(where: { !used.contains($0) }) {
            throw NetworkError.invalidRequest("path '\(path)' has no placeholder '{\(unused)}' for the value given")
        }
        return segments
    }
}
