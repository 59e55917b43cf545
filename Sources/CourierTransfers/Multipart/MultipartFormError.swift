import Courier
import Foundation

/// Why a ``MultipartForm`` refused a part or could not produce its body.
public enum MultipartFormError: Error, Sendable, Hashable, LocalizedError {
    /// A field name, filename or media type contains CR, LF or another control character (other
    /// than HTAB), which a quoted string cannot carry (RFC 9110 §5.6.4). RFC 7578 §4.2 gives no
    /// escape for them and `filename*` is not used in `multipart/form-data`, so Courier refuses
    /// instead of changing the name. `what` says which parameter.
    case invalidCharacter(what: String, value: String)
    /// A boundary given by the caller is not 1–70 characters of RFC 2046 §5.1.1 `bchars` (or ends
    /// in a space).
    case invalidBoundary(String)
    /// The caller's boundary occurs inside an in-memory part, so the body would be cut there.
    /// (A random boundary is replaced instead.)
    case boundaryInContent(String)
    /// A file part cannot be read (`path` is the file's path).
    case unreadableFile(path: String)
    /// A file part's size changed between adding it and sending it; the declared
    /// `Content-Length` would be wrong, so the send fails. Sizes in bytes.
    case fileChanged(path: String, expected: Int64, actual: Int64)

    /// A sentence for logs.
    public var errorDescription: String? {
        switch self {
        case .invalidCharacter(let what, let value):
            return "the multipart \(what) \(value.debugDescription) contains CR, LF or another control character"
        case .invalidBoundary(let boundary): return "\(boundary.debugDescription) is not a valid multipart boundary"
        case .boundaryInContent(let boundary): return "the multipart boundary \(boundary.debugDescription) occurs in a part"
        case .unreadableFile(let path): return "the multipart file part at \(path) cannot be read"
        case .fileChanged(let path, let expected, let actual):
            return "the multipart file part at \(path) changed size (\(expected) bytes when added, \(actual) when sent)"
        }
    }
}
