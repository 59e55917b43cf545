import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension BackgroundDownloadRecord: RegistryRecord {}

/// The persisted list of background downloads: `downloads.json`, rewritten atomically on every
/// change (dates as seconds since 1970).
typealias BackgroundDownloadRegistry = RegistryFile<BackgroundDownloadRecord, BackgroundDownloadError>

/// Why a ``BackgroundDownloads`` manager could not keep its records.
public enum BackgroundDownloadError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The registry file exists but cannot be read or is not a registry; it is left as it is.
    case registryUnreadable(path: String, reason: String)
    /// The registry file could not be written.
    case registryUnwritable(path: String, reason: String)
    /// No download with this identifier.
    case unknownDownload(UUID)
    /// ``BackgroundDownloads/resume(_:)`` on a download that has no resume data.
    case notResumable(UUID)

    public var description: String {
        switch self {
        case .registryUnreadable(let path, let reason): return "download registry \(path) unreadable: \(reason)"
        case .registryUnwritable(let path, let reason): return "download registry \(path) could not be written: \(reason)"
        case .unknownDownload(let id): return "no background download \(id)"
        case .notResumable(let id): return "background download \(id) has no resume data"
        }
    }
}
