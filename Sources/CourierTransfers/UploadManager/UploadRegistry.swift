import Courier
import Foundation

extension UploadRecord: RegistryRecord {}

/// The persisted list of uploads: `uploads.json`, rewritten atomically on every change (dates as
/// ISO 8601 text).
typealias UploadRegistry = RegistryFile<UploadRecord, UploadManagerError>

/// Staged copies of the files being uploaded, in a folder the app owns, so the user's original
/// can change or go away while the upload runs.
struct StagingStore: Sendable {
    let directory: URL

    /// Copies `source` into the store, readable by its owner alone (mode 0600, in a folder of mode
    /// 0700, whatever the original's mode) and dated now (a copy may keep the original's date);
    /// returns the staged file's name. A failure leaves nothing behind.
    func stage(copying source: URL) throws -> String {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: AtomicFile.folderAttributes)
        let name = UUID.random().uuidString + (source.pathExtension.isEmpty ? "" : "." + source.pathExtension)
        try FileManager.default.copyItem(at: source, to: url(of: name))
        do {
            try FileManager.default.setAttributes(
                [.posixPermissions: Int(AtomicFile.fileMode), .modificationDate: Date()], ofItemAtPath: url(of: name).path)
        } catch {
            remove(name)
            throw error
        }
        return name
    }

    /// Writes `form`'s body into the store (for a file-only transport); returns the file's name.
    /// A failed write leaves nothing behind.
    func stage(_ form: MultipartForm) throws -> String {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: AtomicFile.folderAttributes)
        let name = UUID.random().uuidString + ".multipart"
        try form.writeBody(to: url(of: name))
        return name
    }

    func url(of name: String) -> URL { directory.appendingPathComponent(name) }

    func remove(_ name: String) { try? FileManager.default.removeItem(at: url(of: name)) }

    /// Removes every staged file not in `keep` (left by a crash or an abandoned upload) that was
    /// staged before `cutoff`: a newer one may be another manager's on the folder, staged and not
    /// yet recorded in the registry.
    func removeAll(except keep: Set<String>, stagedBefore cutoff: Date) {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in files where !keep.contains(name) {
            let staged = try? FileManager.default.attributesOfItem(atPath: url(of: name).path)[.modificationDate] as? Date
            if let staged, staged < cutoff { remove(name) }
        }
    }
}
