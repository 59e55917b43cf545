import Courier
import Foundation

/// What a resumable (tus) upload needs to continue after the process restarts: the upload URL
/// the server created, the offset last confirmed, and the file it belongs to.
public struct ResumableUploadRecord: Sendable, Codable, Hashable {
    /// The caller's key for this upload (by default derived from the file's path, size and
    /// modification date).
    public var key: String
    /// The upload resource (`Location` of the creation response).
    public var uploadURL: URL
    /// Bytes the server confirmed (`Upload-Offset` of the last PATCH response).
    public var offset: Int64
    /// The upload's total length in bytes (`Upload-Length`).
    public var length: Int64
    /// When the upload was created.
    public var createdAt: Date
}

/// A small persistent store of ``ResumableUploadRecord``s: one JSON file per upload in an
/// app-owned folder (e.g. Application Support), each written atomically.
///
/// Foundation only, so it lives in the core module: a handful of records read once per upload
/// and rewritten after each chunk does not need CourierOffline's SQLite.
public struct ResumableUploadStore: Sendable {
    /// The folder the records live in; created on first save.
    public let directory: URL

    /// A store in `directory`.
    public init(directory: URL) {
        self.directory = directory
    }

    /// The record for `key`, or `nil` when none is stored (or the file is unreadable).
    public func record(for key: String) -> ResumableUploadRecord? {
        guard let data = try? Data(contentsOf: file(for: key)),
            let record = try? JSONDecoder().decode(ResumableUploadRecord.self, from: data), record.key == key
        else { return nil }
        return record
    }

    /// Saves `record`, replacing the one with the same key.
    /// - Throws: The file system's error.
    public func save(_ record: ResumableUploadRecord) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try AtomicFile.write(try encoder.encode(record), to: file(for: record.key))
    }

    /// Removes the record for `key` (nothing happens when there is none).
    public func remove(_ key: String) {
        try? FileManager.default.removeItem(at: file(for: key))
    }

    /// Every stored record (for listing unfinished uploads).
    public func allRecords() -> [ResumableUploadRecord] {
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        return files.filter { $0.pathExtension == "json" }.compactMap { url in
            (try? Data(contentsOf: url)).flatMap { try? JSONDecoder().decode(ResumableUploadRecord.self, from: $0) }
        }
    }

    private func file(for key: String) -> URL {
        directory.appendingPathComponent("tus-" + StableHash.hex128(key)).appendingPathExtension("json")
    }
}
