import Foundation

/// Why a ``ResumableUploadStore`` could not read what it holds.
public enum ResumableUploadStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A record file exists but cannot be read, or is not a ``ResumableUploadRecord`` (another
    /// build's format, a damaged file). It is left as it is: an upload whose record cannot be read
    /// fails with this error instead of starting over from byte 0 and orphaning the upload the
    /// server holds.
    case recordUnreadable(path: String, reason: String)

    /// The case and its path and reason, for logs (paths are the app's own container paths).
    public var description: String {
        switch self {
        case .recordUnreadable(let path, let reason): return "resumable upload record \(path) unreadable: \(reason)"
        }
    }
}
