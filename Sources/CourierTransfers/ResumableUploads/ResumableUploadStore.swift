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
    /// The creation URL the upload was made at (absolute, in the environment of that moment);
    /// `nil` in records written before it was kept. An uploader resumes only its own uploads.
    public var creationURL: URL?
    /// The upload file's modification date when the upload was created; `nil` in records written
    /// before it was kept. A run resumes the upload only while the file still has this date: a
    /// file saved again between runs — at the same size, under the same key — is uploaded anew,
    /// never appended to the bytes of its earlier version.
    public var fileModified: Date? = nil
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

    /// The record for `key`, or `nil` when none is stored.
    ///
    /// - Throws: ``ResumableUploadStoreError/recordUnreadable(path:reason:)`` when its file exists
    ///   but cannot be read or decoded; the file is left as it is.
    public func record(for key: String) throws(ResumableUploadStoreError) -> ResumableUploadRecord? {
        let url = file(for: key)
        guard let record = try Self.read(url) else { return nil }
        // Another key with the same 128-bit hash: not this upload's record.
        return record.key == key ? record : nil
    }
    /// Saves `record`, replacing the one with the same key.
    /// - Throws: The file system's error.
    public func save(_ record: ResumableUploadRecord) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        try AtomicFile.write(try encoder.encode(record), to: file(for: record.key))
    }

    /// The keys of the runs under way in this process, per store folder: a second run of one key
    /// would create a second upload of the same file.
    static let runs = Locked<Set<String>>([])

    /// Marks a run of `key` as under way; `false` when one already is.
    func claimRun(of key: String) -> Bool { Self.runs.withLock { $0.insert(resetKey + "|" + key).inserted } }

    /// Ends the run of `key` that ``claimRun(of:)`` marked.
    func endRun(of key: String) { _ = Self.runs.withLock { $0.remove(resetKey + "|" + key) } }

    /// How many times ``resetSession()`` ran on each store folder in this process: a run that
    /// began before a reset must not write its record back after it.
    static let resets = Locked<[String: Int]>([:])

    /// This store's key in ``resets``.
    var resetKey: String { directory.standardizedFileURL.path }

    /// The resets of this store's folder so far (see ``save(_:unlessResetSince:)``).
    func resetCount() -> Int { Self.resets.withLock { $0[resetKey] ?? 0 } }

    /// Saves `record` unless ``resetSession()`` ran since ``resetCount()`` returned `count`
    /// (checked and written under one lock, so a reset cannot fall between them). Returns whether
    /// it saved.
    func save(_ record: ResumableUploadRecord, unlessResetSince count: Int) throws -> Bool {
        try Self.resets.withLock { resets in
            guard (resets[resetKey] ?? 0) == count else { return false }
            try save(record)
            return true
        }
    }

    /// Removes the record for `key` (nothing happens when there is none).
    public func remove(_ key: String) {
        try? FileManager.default.removeItem(at: file(for: key))
    }

    /// Every stored record (for listing unfinished uploads); none when the folder does not exist.
    ///
    /// - Throws: ``ResumableUploadStoreError/recordUnreadable(path:reason:)`` for the folder or a
    ///   record file that exists but cannot be read or decoded.
    public func allRecords() throws(ResumableUploadStoreError) -> [ResumableUploadRecord] {
        let files: [URL]
        do {
            files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
        } catch {
            if !FileManager.default.fileExists(atPath: directory.path) { return [] }
            throw .recordUnreadable(path: directory.path, reason: String(describing: error))
        }
        var records: [ResumableUploadRecord] = []
        for url in files.filter({ $0.pathExtension == "json" }).sorted(by: { $0.path < $1.path }) {
            if let record = try Self.read(url) { records.append(record) }
        }
        return records
    }

    /// The record in `url`; `nil` when there is no such file.
    private static func read(_ url: URL) throws(ResumableUploadStoreError) -> ResumableUploadRecord? {
        let data: Data
        do {
            data = try Data(contentsOf: url)
            // A record an earlier version wrote 0644 names the upload's URL too.
            AtomicFile.makePrivate(url)
        } catch {
            if !FileManager.default.fileExists(atPath: url.path) { return nil }
            throw .recordUnreadable(path: url.path, reason: String(describing: error))
        }
        do {
            return try JSONDecoder().decode(ResumableUploadRecord.self, from: data)
        } catch {
            throw .recordUnreadable(path: url.path, reason: "not a resumable upload record: \(error)")
        }
    }

    private func file(for key: String) -> URL {
        directory.appendingPathComponent(Self.recordPrefix + StableHash.hex128(key)).appendingPathExtension("json")
    }

    /// The start of every record file's name.
    private static let recordPrefix = "tus-"

    /// Whether `file` is one of the store's records (another file in the folder is not touched).
    static func isRecordFile(_ file: URL) -> Bool {
        file.pathExtension == "json" && file.lastPathComponent.hasPrefix(recordPrefix)
    }
}
