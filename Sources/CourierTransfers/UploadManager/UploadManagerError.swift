import Foundation

/// Why an ``UploadManager`` could not keep its registry (the JSON file listing its uploads).
public enum UploadManagerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The registry file exists but cannot be read or is not an upload registry. It is left as
    /// it is, and so are the staged files: nothing is swept or overwritten on a guess.
    case registryUnreadable(path: String, reason: String)
    /// The registry file could not be written; the change is kept in memory and the next write
    /// (the registry is rewritten whole at every change) carries it.
    case registryUnwritable(path: String, reason: String)

    /// The case and its path and reason, for logs (paths are the app's own container paths).
    public var description: String {
        switch self {
        case .registryUnreadable(let path, let reason): return "upload registry \(path) unreadable: \(reason)"
        case .registryUnwritable(let path, let reason): return "upload registry \(path) could not be written: \(reason)"
        }
    }
}
