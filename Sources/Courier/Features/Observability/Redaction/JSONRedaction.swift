/// A forgiving, streaming JSON redactor: copies the input byte for byte, except that the value of
/// every member whose key is sensitive — string, number, literal, object or array, at any depth —
/// is replaced by the marker as a JSON string, and the replaced scalars are reported as secrets.
///
/// A *key* is any string followed by `:`; the value after that colon is the member's value. Reading
/// structure that locally keeps it working on what a preview hands it: a body cut in the middle
/// (an unterminated string or object ends the scan), unbalanced brackets, bytes that are not JSON
/// (copied through), deep nesting (no recursion, no stack). It never parses into a tree, so key
/// order, spacing and number spelling are kept. On garbage it produces garbage, never a crash.
struct JSONRedaction {
    let isSensitive: (String) -> Bool
    let marker: String

    /// Redacts `input`.
    /// - Returns: The redacted bytes and the text of every scalar value that was replaced
    ///   (strings unescaped).
    func redact(_ input: [UInt8]) -> (output: [UInt8], secrets: [String]) {
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var secrets: [String] = []
        let markerBytes = Array(("\"" + JSONRedaction.escape(marker) + "\"").utf8)
        /// Whether the last key read (a string followed by `:`) is sensitive, until its colon.
        var pendingKeyIsSensitive = false
        /// Set after the colon of a sensitive key: the next value is swallowed.
        var swallowNextValue = false
        var index = 0

        while index < input.count {
            let byte = input[index]
            if Self.isWhitespace(byte) {
                output.append(byte)
                index += 1
                continue
            }
            if swallowNextValue {
                swallowNextValue = false
                output.append(contentsOf: markerBytes)
                index = skipValue(input, from: index, secrets: &secrets)
                continue
            }
            switch byte {
            case UInt8(ascii: "\""):
                let end = Self.stringEnd(input, from: index)
                output.append(contentsOf: input[index..<end])
                if Self.isFollowedByColon(input, at: end) {
                    pendingKeyIsSensitive = isSensitive(Self.unescape(Self.content(input, from: index, to: end)))
                } else {
                    pendingKeyIsSensitive = false
                }
                index = end
            case UInt8(ascii: ":"):
                output.append(byte)
                swallowNextValue = pendingKeyIsSensitive
                pendingKeyIsSensitive = false
                index += 1
            default:
                output.append(byte)
                pendingKeyIsSensitive = false
                index += 1
            }
        }
        return (output, secrets)
    }

    /// Skips one JSON value starting at `start` (a string, a bare scalar, or a whole container),
    /// collecting its scalars as secrets. Returns the index after it (or the end of the input).
    private func skipValue(_ input: [UInt8], from start: Int, secrets: inout [String]) -> Int {
        var index = start
        var depth = 0
        repeat {
            guard index < input.count else { return index }
            let byte = input[index]
            switch byte {
            case UInt8(ascii: "\""):
                let end = Self.stringEnd(input, from: index)
                // Inside a swallowed object, member names are structure, not secrets.
                if !Self.isFollowedByColon(input, at: end) {
                    secrets.append(Self.unescape(Self.content(input, from: index, to: end)))
                }
                index = end
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                index += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                // A closing bracket with nothing open belongs to the enclosing container.
                if depth == 0 { return index }
                depth -= 1
                index += 1
            case UInt8(ascii: ","), UInt8(ascii: ":"):
                if depth == 0 { return index }
                index += 1
            default:
                if Self.isWhitespace(byte) {
                    if depth == 0 && index > start { return index }
                    index += 1
                } else {
                    var end = index
                    while end < input.count, !Self.isDelimiter(input[end]) { end += 1 }
                    secrets.append(String(decoding: input[index..<end], as: UTF8.self))
                    index = max(end, index + 1)
                }
            }
        } while depth > 0
        return index
    }

    /// Index just past the string starting at `start` (the closing quote), or the end of the input
    /// for an unterminated string.
    static func stringEnd(_ input: [UInt8], from start: Int) -> Int {
        var index = start + 1
        while index < input.count {
            switch input[index] {
            case UInt8(ascii: "\\"): index += 2
            case UInt8(ascii: "\""): return index + 1
            default: index += 1
            }
        }
        return input.count
    }

    /// The content of the string from `start` (its opening quote) to `end` (from
    /// ``stringEnd(_:from:)``): without the quotes, or up to the end for an unterminated string.
    private static func content(_ input: [UInt8], from start: Int, to end: Int) -> ArraySlice<UInt8> {
        let contentStart = min(start + 1, end)
        let terminated = end > contentStart && end <= input.count && input[end - 1] == UInt8(ascii: "\"")
        return input[contentStart..<(terminated ? end - 1 : end)]
    }

    private static func isFollowedByColon(_ input: [UInt8], at start: Int) -> Bool {
        var index = start
        while index < input.count, isWhitespace(input[index]) { index += 1 }
        return index < input.count && input[index] == UInt8(ascii: ":")
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func isDelimiter(_ byte: UInt8) -> Bool {
        isWhitespace(byte) || byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}")
            || byte == UInt8(ascii: "]") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "\"")
            || byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[")
    }

    /// Decodes the content of a JSON string (RFC 8259 §7), leniently: an invalid escape is kept as
    /// written, an unpaired surrogate becomes U+FFFD.
    static func unescape(_ bytes: ArraySlice<UInt8>) -> String {
        guard bytes.contains(UInt8(ascii: "\\")) else { return String(decoding: bytes, as: UTF8.self) }
        var scalars = String.UnicodeScalarView()
        var buffer: [UInt8] = []
        var index = bytes.startIndex
        func flush() {
            scalars.append(contentsOf: String(decoding: buffer, as: UTF8.self).unicodeScalars)
            buffer.removeAll(keepingCapacity: true)
        }
        func hex4(at position: Int) -> UInt32? {
            guard position + 4 <= bytes.endIndex else { return nil }
            return UInt32(String(decoding: bytes[position..<(position + 4)], as: UTF8.self), radix: 16)
        }
        while index < bytes.endIndex {
            let byte = bytes[index]
            guard byte == UInt8(ascii: "\\"), index + 1 < bytes.endIndex else {
                buffer.append(byte)
                index += 1
                continue
            }
            let escape = bytes[index + 1]
            let simple: UInt8? =
                switch escape {
                case UInt8(ascii: "\""): UInt8(ascii: "\"")
                case UInt8(ascii: "\\"): UInt8(ascii: "\\")
                case UInt8(ascii: "/"): UInt8(ascii: "/")
                case UInt8(ascii: "b"): 0x08
                case UInt8(ascii: "f"): 0x0C
                case UInt8(ascii: "n"): 0x0A
                case UInt8(ascii: "r"): 0x0D
                case UInt8(ascii: "t"): 0x09
                default: nil
                }
            if let simple {
                buffer.append(simple)
                index += 2
                continue
            }
            guard escape == UInt8(ascii: "u"), let unit = hex4(at: index + 2) else {
                buffer.append(byte)
                index += 1
                continue
            }
            flush()
            index += 6
            var value = unit
            if (0xD800..<0xDC00).contains(unit), index + 1 < bytes.endIndex,
                bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u"),
                let low = hex4(at: index + 2), (0xDC00..<0xE000).contains(low)
            {
                value = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                index += 6
            }
            scalars.append(Unicode.Scalar(value) ?? "\u{FFFD}")
        }
        flush()
        return String(scalars)
    }

    /// Escapes `text` for use inside a JSON string (quotes, backslashes, control characters).
    static func escape(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16, uppercase: false)
                result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
