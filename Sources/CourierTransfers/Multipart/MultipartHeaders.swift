import Courier
import Foundation

/// The header block of one `multipart/form-data` part (RFC 7578 §4.2, §4.4).
enum MultipartHeaders {
    /// `Content-Disposition: form-data; name="…"[; filename="…"]` and, for files,
    /// `Content-Type`, each line ending in CRLF, then the empty line.
    ///
    /// Names and filenames go into quoted strings as UTF-8 bytes with `"` and `\` escaped as
    /// quoted-pairs (RFC 9110 §5.6.4); never `filename*` (RFC 7578 §4.2).
    ///
    /// - Throws: ``MultipartFormError/invalidCharacter(what:value:)`` for CR, LF or another
    ///   control character.
    static func block(name: String, filename: String?, contentType: String?) throws -> Data {
        var text = "Content-Disposition: form-data; name=\(try quoted(name, what: "field name"))"
        if let filename { text += "; filename=\(try quoted(filename, what: "filename"))" }
        text += "\r\n"
        if let contentType {
            try refuseControls(contentType, what: "media type")
            text += "Content-Type: \(contentType)\r\n"
        }
        text += "\r\n"
        return Data(text.utf8)
    }

    /// `value` as a quoted string: `"` and `\` preceded by `\`, every other byte as is.
    static func quoted(_ value: String, what: String) throws -> String {
        try refuseControls(value, what: what)
        var out = "\""
        for character in value.unicodeScalars {
            if character == "\"" || character == "\\" { out.unicodeScalars.append("\\") }
            out.unicodeScalars.append(character)
        }
        return out + "\""
    }

    private static func refuseControls(_ value: String, what: String) throws {
        let bad = value.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }
        if bad { throw MultipartFormError.invalidCharacter(what: what, value: value) }
    }
}
