import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The persisted list of background downloads: one JSON file, written atomically.
struct BackgroundDownloadRegistry: Sendable {
    let file: URL

    /// The records, or none when the file does not exist yet.
    /// - Throws: ``BackgroundDownloadError/registryUnreadable(path:reason:)``.
    func load() throws -> [UUID: BackgroundDownloadRecord] {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            if !FileManager.default.fileExists(atPath: file.path) { return [:] }
            throw BackgroundDownloadError.registryUnreadable(path: file.path, reason: "\(error)")
        }
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            let list = try decoder.decode([BackgroundDownloadRecord].self, from: data)
            return Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { $1 })
        } catch {
            throw BackgroundDownloadError.registryUnreadable(path: file.path, reason: "not a download registry: \(error)")
        }
    }

    /// Writes `records`.
    /// - Throws: ``BackgroundDownloadError/registryUnwritable(path:reason:)``.
    func save(_ records: [UUID: BackgroundDownloadRecord]) throws {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            encoder.dateEncodingStrategy = .secondsSince1970
            try AtomicFile.write(try encoder.encode(records.values.sorted { $0.createdAt < $1.createdAt }), to: file)
        } catch {
            throw BackgroundDownloadError.registryUnwritable(path: file.path, reason: "\(error)")
        }
    }
}

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
