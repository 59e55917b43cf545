/// What a log, record or HAR file shows of a body: redacted text cut to a byte limit, or — for
/// bodies that are not text — only their size and type.
public enum BodyPreview: Sendable, Hashable, CustomStringConvertible {
    /// Redacted text of at most ``Redactor/bodyPreviewLimit`` bytes of the body (UTF-8);
    /// `truncated` when the body was longer. A body labelled as text or JSON whose bytes are not
    /// valid UTF-8 is shown with U+FFFD for each invalid sequence and the note
    /// `<not valid UTF-8: invalid bytes shown as U+FFFD>` at the end.
    case text(String, truncated: Bool)
    /// A body that is not shown: binary media (images, protobuf, `multipart/form-data`) or
    /// unlabelled bytes that are not valid UTF-8. Size in bytes; the `Content-Type` when known.
    case binary(size: Int, contentType: String?)

    /// The preview text, or `nil` for ``binary(size:contentType:)``.
    public var text: String? {
        if case .text(let text, _) = self { return text }
        return nil
    }

    /// `true` when the text stops before the end of the body.
    public var isTruncated: Bool {
        if case .text(_, let truncated) = self { return truncated }
        return false
    }

    /// The text followed by `…(truncated)` when cut, or `<binary: N bytes, type>`.
    public var description: String {
        switch self {
        case .text(let text, let truncated):
            return truncated ? text + "…(truncated)" : text
        case .binary(let size, let contentType):
            return "<binary: \(size) bytes\(contentType.map { ", \($0)" } ?? "")>"
        }
    }
}

/// How a body is treated by the redactor, from its media type or, when there is none, its bytes.
enum BodyKind: Equatable {
    case json, form, text, binary

    /// Classifies a body.
    /// - Parameters:
    ///   - mediaType: The `Content-Type` without parameters, lower-cased; `nil` when absent.
    ///   - bytes: The body, or a prefix of it, for sniffing when `mediaType` is `nil`.
    static func classify(mediaType: String?, bytes: some Collection<UInt8>) -> BodyKind {
        guard let mediaType, !mediaType.isEmpty else { return sniff(bytes) }
        if mediaType == "application/json" || mediaType.hasSuffix("+json") || mediaType == "text/json"
            || mediaType == "application/x-ndjson" || mediaType == "application/jsonl"
            || mediaType == "application/json-seq"
        {
            return .json
        }
        if mediaType == "application/x-www-form-urlencoded" { return .form }
        if mediaType.hasPrefix("text/") || mediaType.hasSuffix("+xml") || mediaType == "application/xml"
            || mediaType == "application/javascript" || mediaType == "application/graphql"
            || mediaType == "application/yaml" || mediaType == "application/x-yaml"
        {
            // Servers and clients often label JSON `text/plain`: a body that looks like JSON is
            // redacted as JSON (the scanner tolerates anything that turns out not to be).
            // Likewise a `key=value&…` body labelled as text is redacted as a form.
            let sniffed = sniff(bytes)
            if sniffed == .json { return .json }
            return sniffed == .text && looksLikeForm(bytes) ? .form : .text
        }
        return .binary
    }

    /// `key=value` pairs joined by `&`, with nothing but form-encoding characters (no spaces), as a
    /// token endpoint or a misconfigured proxy sends under `text/plain`.
    private static func looksLikeForm(_ bytes: some Collection<UInt8>) -> Bool {
        var sawEquals = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "="): sawEquals = true
            case _ where byte.isASCIIAlphanumeric || "&%+-_.~*\n\r".utf8.contains(byte): continue
            default: return false
            }
        }
        return sawEquals
    }

    /// With no media type: JSON when it starts with `{` or `[`, text when it is printable UTF-8,
    /// binary otherwise.
    private static func sniff(_ bytes: some Collection<UInt8>) -> BodyKind {
        let first = bytes.first { !(($0 == 0x20) || ($0 == 0x09) || ($0 == 0x0A) || ($0 == 0x0D)) }
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") { return .json }
        let printable = !bytes.contains { ($0 < 0x20 && $0 != 0x09 && $0 != 0x0A && $0 != 0x0D) || $0 == 0x7F }
        return printable && UTF8Text.isValid(bytes) ? .text : .binary
    }
}

/// UTF-8 helpers that never trap on bad input.
enum UTF8Text {
    /// `true` when `bytes` is well-formed UTF-8 (Unicode §3.9, table 3-7).
    static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        while true {
            switch decoder.decode(&iterator) {
            case .scalarValue: continue
            case .emptyInput: return true
            case .error: return false
            }
        }
    }

    /// The first at most `limit` bytes of `bytes`, shortened so it does not end inside a
    /// multi-byte character.
    static func prefix(_ bytes: [UInt8], limit: Int) -> ArraySlice<UInt8> {
        let limit = max(0, limit)
        guard bytes.count > limit else { return bytes[...] }
        var end = limit
        var steps = 0
        // bytes[end] is the first byte left out; if it continues a character, cut before its lead byte.
        while end > 0, steps < 4, bytes[end] & 0xC0 == 0x80 {
            end -= 1
            steps += 1
        }
        return bytes[..<end]
    }
}
