import Foundation

extension HTTPResponse {
    /// The `charset` parameter of `Content-Type` (RFC 9110 §8.3.2), lower-cased and unquoted, or
    /// `nil` when there is none.
    public var charset: String? {
        headers["Content-Type"].flatMap { MediaTypeParameters.value(of: "charset", in: $0)?.lowercased() }
    }

    /// The body as text in the charset its `Content-Type` names (RFC 9110 §8.3.2).
    ///
    /// Charset names are case-insensitive and may be quoted (`charset="ISO-8859-1"`). Without a
    /// charset the body is UTF-8 (RFC 6838 §4.2.1 for `text/*`, RFC 8259 §8.1 for JSON). A leading
    /// byte-order mark is dropped and decides the encoding over the label, as in the WHATWG
    /// Encoding Standard's "decode" (UTF-8, UTF-16BE/LE; a UTF-32 mark for a `utf-32` label).
    /// EUC-JP is decoded where Foundation can (not on Linux: ``TextDecodingError/Reason/unsupportedCharset``).
    ///
    /// - Throws: ``TextDecodingError`` when the charset is not one Courier knows, or the bytes are
    ///   not valid in it (a UTF-16 or UTF-32 body cut inside a code unit included) — never
    ///   mojibake, replacement characters or a silently shortened text.
    public func text() throws -> String {
        let name = charset ?? "utf-8"
        guard let labelled = TextDecodingError.encoding(forCharset: name) else {
            throw TextDecodingError(reason: .unsupportedCharset, charset: name)
        }
        var bytes = data[...]
        var encoding = labelled
        let utf32: [String.Encoding] = [.utf32, .utf32BigEndian, .utf32LittleEndian]
        let utf16: [String.Encoding] = [.utf16, .utf16BigEndian, .utf16LittleEndian]
        if utf32.contains(encoding) {
            if bytes.starts(with: [0x00, 0x00, 0xFE, 0xFF]) {
                (encoding, bytes) = (.utf32BigEndian, bytes.dropFirst(4))
            } else if bytes.starts(with: [0xFF, 0xFE, 0x00, 0x00]) {
                (encoding, bytes) = (.utf32LittleEndian, bytes.dropFirst(4))
            }
        } else if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            // A byte-order mark decides over the label (WHATWG Encoding, "decode"): a label that
            // contradicts it would turn the text into mojibake.
            (encoding, bytes) = (.utf8, bytes.dropFirst(3))
        } else if bytes.starts(with: [0xFE, 0xFF]) {
            (encoding, bytes) = (.utf16BigEndian, bytes.dropFirst(2))
        } else if bytes.starts(with: [0xFF, 0xFE]) {
            (encoding, bytes) = (.utf16LittleEndian, bytes.dropFirst(2))
        }
        // A cut code unit is malformed, not a shorter text (Foundation drops it silently).
        let unit = utf32.contains(encoding) ? 4 : utf16.contains(encoding) ? 2 : 1
        guard bytes.count % unit == 0 else { throw TextDecodingError(reason: .malformedBytes, charset: name) }
        guard let text = String(data: Data(bytes), encoding: encoding) else {
            throw TextDecodingError(reason: .malformedBytes, charset: name)
        }
        return text
    }
}

/// A response body could not be read as text (``HTTPResponse/text()``).
public struct TextDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Why the text could not be read.
    public enum Reason: Sendable, Hashable {
        /// The `charset` is not one Courier decodes (see ``HTTPResponse/text()``).
        case unsupportedCharset
        /// The bytes are not valid in the charset.
        case malformedBytes
    }

    /// Why the text could not be read.
    public let reason: Reason
    /// The charset name, lower-cased, e.g. `iso-8859-1`.
    public let charset: String

    public var description: String {
        switch reason {
        case .unsupportedCharset: return "the response charset '\(charset)' is not supported"
        case .malformedBytes: return "the response body is not valid \(charset) text"
        }
    }

    /// Whether this platform's Foundation decodes EUC-JP (swift-corelibs-foundation does not):
    /// checked once with `あ` (`A4 A2`).
    private static let decodesEUCJP = String(data: Data([0xA4, 0xA2]), encoding: .japaneseEUC) == "\u{3042}"

    /// Foundation encodings for the IANA charset names (and common aliases) Courier decodes.
    static func encoding(forCharset name: String) -> String.Encoding? {
        switch name.lowercased() {
        case "utf-8", "utf8", "unicode-1-1-utf-8": return .utf8
        case "us-ascii", "ascii", "iso646-us", "ansi_x3.4-1968": return .ascii
        case "iso-8859-1", "iso8859-1", "iso_8859-1", "latin1", "l1", "cp819", "ibm819": return .isoLatin1
        case "iso-8859-2", "iso8859-2", "iso_8859-2", "latin2", "l2": return .isoLatin2
        case "windows-1252", "cp1252": return .windowsCP1252
        case "windows-1250", "cp1250": return .windowsCP1250
        case "windows-1251", "cp1251": return .windowsCP1251
        case "windows-1253", "cp1253": return .windowsCP1253
        case "windows-1254", "cp1254": return .windowsCP1254
        case "utf-16": return .utf16
        case "utf-16be": return .utf16BigEndian
        case "utf-16le": return .utf16LittleEndian
        case "utf-32": return .utf32
        case "utf-32be": return .utf32BigEndian
        case "utf-32le": return .utf32LittleEndian
        case "shift_jis", "shift-jis", "sjis", "ms_kanji", "csshiftjis": return .shiftJIS
        case "euc-jp", "eucjp": return decodesEUCJP ? .japaneseEUC : nil
        case "iso-2022-jp": return .iso2022JP
        case "macintosh", "mac", "x-mac-roman": return .macOSRoman
        default: return nil
        }
    }
}
