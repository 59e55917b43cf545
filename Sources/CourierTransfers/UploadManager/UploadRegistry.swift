import Courier
import Foundation

/// The persisted list of uploads: one JSON file, rewritten atomically on every change.
struct UploadRegistry: Sendable {
    let file: URL

    /// The records, or none when the file does not exist yet.
    /// - Throws: ``UploadManagerError/registryUnreadable(path:reason:)``.
    func load() throws -> [UUID: UploadRecord] {
        let data: Data
        do {
            data = try Data(contentsOf: file)
        } catch {
            if !FileManager.default.fileExists(atPath: file.path) { return [:] }
            throw UploadManagerError.registryUnreadable(path: file.path, reason: "\(error)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            let records = try decoder.decode([UploadRecord].self, from: data)
            return Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        } catch {
            throw UploadManagerError.registryUnreadable(path: file.path, reason: "not an upload registry: \(error)")
        }
    }

    /// Writes `records`, atomically.
    /// - Throws: ``UploadManagerError/registryUnwritable(path:reason:)``.
    func save(_ records: [UUID: UploadRecord]) throws(UploadManagerError) {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            encoder.dateEncodingStrategy = .iso8601
            try AtomicFile.write(try encoder.encode(records.values.sorted { $0.createdAt < $1.createdAt }), to: file)
        } catch {
            throw UploadManagerError.registryUnwritable(path: file.path, reason: "\(error)")
        }
    }
}

/// Staged copies of the files being uploaded, in a folder the app owns, so the user's original
/// can change or go away while the upload runs.
struct StagingStore: Sendable {
    let directory: URL

    /// Copies `source` into the store; returns the staged file's name.
    func stage(copying source: URL) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let name = UUID.random().uuidString + (source.pathExtension.isEmpty ? "" : "." + source.pathExtension)
        try FileManager.default.copyItem(at: source, to: url(of: name))
        return name
    }

    /// Writes `form`'s body into the store (for a file-only transport); returns the file's name.
    /// A failed write leaves nothing behind.
    func stage(_ form: MultipartForm) throws -> String {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let name = UUID.random().uuidString + ".multipart"
        try form.writeBody(to: url(of: name))
        return name
    }

    func url(of name: String) -> URL { directory.appendingPathComponent(name) }

    func remove(_ name: String) { try? FileManager.default.removeItem(at: url(of: name)) }

    /// Removes every staged file not in `keep` (left by a crash or an abandoned upload).
    func removeAll(except keep: Set<String>) {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in files where !keep.contains(name) { remove(name) }
    }
}
