import Foundation

/// Why header fields could not be made from a model or from credentials. Messages name the field
/// and the problem but never repeat the value (it may be a secret).
public enum HeaderFieldError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError, DescribedError {
    /// What is wrong with a field value.
    public enum Problem: String, Sendable, Hashable {
        /// CR or LF: would end the field and inject another one (RFC 9110 §5.5).
        case lineBreak
        /// Another control character (NUL, ESC, DEL…), not allowed in a field value (RFC 9110 §5.5).
        case controlCharacter
        /// A character outside US-ASCII; new fields are limited to US-ASCII (RFC 9110 §5.5) and
        /// URLSession's encoding of other bytes differs between platforms.
        case nonASCII
        /// Leading or trailing space or tab, which a recipient strips (RFC 9110 §5.5).
        case surroundingWhitespace
    }

    /// A field name that is not an RFC 9110 §5.6.2 token (empty, a space, a colon, non-ASCII).
    case invalidName(String)
    /// A field value the wire cannot carry as is.
    case invalidValue(field: String, problem: Problem)
    /// A model property whose value is not a single text value: a nested object, an array, or a
    /// non-finite number.
    case unsupportedValue(field: String, type: String)
    /// The value is not a model with named properties (a bare string, number or array).
    case notAModel(type: String)
    /// Two properties map to the same field name (names compare case-insensitively, RFC 9110 §5.1).
    case duplicateField(String)
    /// A Basic user-id containing a colon, which would end it early (RFC 7617 §2).
    case colonInUserID

    public var description: String {
        switch self {
        case .invalidName(let name):
            return "header name \(name.debugDescription) is not a valid field name (RFC 9110 §5.6.2 token)"
        case .invalidValue(let field, let problem):
            let reason: String
            switch problem {
            case .lineBreak: reason = "contains CR or LF"
            case .controlCharacter: reason = "contains a control character"
            case .nonASCII: reason = "contains a character outside US-ASCII"
            case .surroundingWhitespace: reason = "starts or ends with whitespace"
            }
            return "the value of header '\(field)' \(reason)"
        case .unsupportedValue(let field, let type):
            return
                "header '\(field)' cannot be made from a \(type); use a string, number, Bool, URL, UUID, Date or a RawRepresentable of those"
        case .notAModel(let type):
            return "\(type) is not a model with named properties; header fields need one property per field"
        case .duplicateField(let name):
            return "header '\(name)' is produced by two properties"
        case .colonInUserID:
            return "a Basic auth user-id must not contain ':' (RFC 7617 §2)"
        }
    }
}

/// The checks shared by model headers and Basic credentials (RFC 9110 §5.1, §5.5).
enum HeaderFieldRules {
    /// - Throws: ``HeaderFieldError/invalidName(_:)`` unless `name` is a non-empty token.
    static func validate(name: String) throws {
        guard !name.isEmpty, name.utf8.allSatisfy(HTTPHeaders.isTokenByte) else { throw HeaderFieldError.invalidName(name) }
    }

    /// - Throws: ``HeaderFieldError/invalidValue(field:problem:)`` for CR/LF, other control
    ///   characters, non-ASCII, or leading/trailing whitespace.
    static func validate(value: String, field: String) throws {
        if let problem = problem(in: value) { throw HeaderFieldError.invalidValue(field: field, problem: problem) }
    }

    /// The first problem of `value` as a field value, CR/LF first (the injection).
    static func problem(in value: String) -> HeaderFieldError.Problem? {
        let bytes = value.utf8
        if bytes.contains(where: { $0 == 0x0D || $0 == 0x0A }) { return .lineBreak }
        if bytes.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) { return .controlCharacter }
        if bytes.contains(where: { $0 >= 0x80 }) { return .nonASCII }
        if let first = bytes.first, let last = bytes.last,
            first == 0x20 || first == 0x09 || last == 0x20 || last == 0x09
        {
            return .surroundingWhitespace
        }
        return nil
    }

}
