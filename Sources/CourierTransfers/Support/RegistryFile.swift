import Courier
import Foundation

/// A record of a registry file: identified by a UUID, listed oldest first.
protocol RegistryRecord: Codable, Sendable {
    /// The record's identifier, its key in the registry.
    var id: UUID { get }
    /// When the record was made; the file lists records in this order.
    var createdAt: Date { get }
}

extension RegistryRecord {
    /// The values of `records` oldest first (by ``createdAt``): the order of the file and of a
    /// manager's list.
    static func oldestFirst(_ records: [UUID: Self]) -> [Self] {
        records.values.sorted { $0.createdAt < $1.createdAt }
    }
}

/// The records of a transfer manager in one JSON file (an array, oldest first), rewritten whole
/// and atomically (``AtomicFile``) at every change, so a crash leaves the old list or the new one.
///
/// A missing file is an empty registry; a file that cannot be read or decoded is the `unreadable`
/// error, never an empty registry (starting empty would forget, and then overwrite, every record).
struct RegistryFile<Record: RegistryRecord, Failure: Error>: Sendable {
    /// The file.
    let file: URL
    /// What the file should be, for the decoding error's text ("an upload registry").
    let name: String
    /// How dates are written: ISO 8601 text, or seconds since 1970 (each manager keeps the format
    /// it shipped with).
    let datesAsISO8601: Bool
    /// The error for a file that exists but cannot be read or decoded: path, reason.
    let unreadable: @Sendable (String, String) -> Failure
    /// The error for a failed write: path, reason.
    let unwritable: @Sendable (String, String) -> Failure

    /// The records by identifier; none when the file does not exist yet.
    /// - Throws: `unreadable`.
    func load() throws(Failure) -> [UUID: Record] {
        let data: Data
        do {
            data = try Data(contentsOf: file)
            // A registry an earlier version wrote 0644 names the user's transfers too.
            AtomicFile.makePrivate(file)
        } catch {
            if !FileManager.default.fileExists(atPath: file.path) { return [:] }
            throw unreadable(file.path, "\(error)")
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = datesAsISO8601 ? .iso8601 : .secondsSince1970
        do {
            let records = try decoder.decode([Record].self, from: data)
            return Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        } catch {
            throw unreadable(file.path, "not \(name): \(error)")
        }
    }

    /// Brings `records` up to date with the file as another manager on it (in this process or
    /// another) left it: every record this manager has not changed since `base` (its records as it
    /// last loaded or wrote them) becomes the file's — a new record, an outcome, a removal — and so
    /// does its entry in `base`. A record this manager changed since keeps its own value.
    /// - Throws: `unreadable`; `records` and `base` are then as they were.
    func reload(_ records: inout [UUID: Record], base: inout [UUID: Record]) throws(Failure) where Record: Equatable {
        let current = try load()
        for id in Set(current.keys).union(base.keys) where records[id] == base[id] {
            records[id] = current[id]
            base[id] = current[id]
        }
    }

    /// Writes `records`, oldest first, atomically.
    /// - Throws: `unwritable`.
    func save(_ records: [UUID: Record]) throws(Failure) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = datesAsISO8601 ? .iso8601 : .secondsSince1970
        do {
            try AtomicFile.write(try encoder.encode(Record.oldestFirst(records)), to: file, durable: true)
        } catch {
            throw unwritable(file.path, "\(error)")
        }
    }

    /// Writes `records` like ``save(_:keepingOutcomeIn:)``, merged with what another manager on the
    /// same file (in this process or another) wrote since `base`, this manager's records as it last
    /// loaded or wrote them: a record this manager changed, added or removed since `base` is written
    /// as it has it; every other record as the file has it now — so two managers sharing a folder
    /// never write each other's records out of the registry. The read, merge and write run under an
    /// exclusive `flock(2)` on a `.lock` file next to the registry, so two writers do not interleave.
    /// A file that is missing or cannot be read or decoded now is written over with `records`, as
    /// ``save(_:)`` does. `base` becomes `records` once the file is written.
    /// - Returns: `lastFailure` as it now is: `nil` when the file was written.
    @discardableResult
    func save(
        _ records: [UUID: Record], over base: inout [UUID: Record], keepingOutcomeIn lastFailure: inout Failure?
    ) -> Failure? where Record: Equatable {
        let lock = Self.lock(file.appendingPathExtension("lock"))
        defer { if lock >= 0 { close(lock) } }  // closing the descriptor drops the lock
        var merged = records
        if let current = try? load() {
            for id in Set(current.keys).union(base.keys).union(records.keys) where records[id] == base[id] {
                merged[id] = current[id]
            }
        }
        let outcome = save(merged, keepingOutcomeIn: &lastFailure)
        if outcome == nil { base = records }
        return outcome
    }

    /// Changes the file under the same lock as ``save(_:over:keepingOutcomeIn:)``: reads it, lets
    /// `change` edit its records, and writes them back when `change` changed any — so that of two
    /// managers deciding about the same records at once, the second sees the first's decision.
    /// - Throws: `unreadable` (nothing is written), `unwritable`.
    func update(_ change: (inout [UUID: Record]) -> Void) throws(Failure) where Record: Equatable {
        let lock = Self.lock(file.appendingPathExtension("lock"))
        defer { if lock >= 0 { close(lock) } }  // closing the descriptor drops the lock
        var records = try load()
        let before = records
        change(&records)
        if records != before { try save(records) }
    }

    /// Opens (creating it and its folder) `url` and takes an exclusive `flock(2)` on it, waiting for
    /// another writer to finish; the descriptor, or `-1` when the lock file cannot be had (the write
    /// then goes ahead unlocked and reports its own failure).
    private static func lock(_ url: URL) -> Int32 {
        // The folder is the registry's, private like the registry file (AtomicFile), which finds
        // it made.
        try? FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: AtomicFile.folderAttributes)
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, AtomicFile.fileMode)
        guard descriptor >= 0 else { return -1 }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                close(descriptor)
                return -1
            }
        }
        return descriptor
    }

    /// Writes `records` like ``save(_:)`` and keeps the outcome in `lastFailure` (a manager's
    /// `registryFailure`): the error, or `nil` once a write succeeds, which repairs any earlier
    /// failure (every write carries the whole list).
    /// - Returns: `lastFailure` as it now is: `nil` when the file was written.
    @discardableResult
    func save(_ records: [UUID: Record], keepingOutcomeIn lastFailure: inout Failure?) -> Failure? {
        do {
            try save(records)
            lastFailure = nil
        } catch {
            lastFailure = error
        }
        return lastFailure
    }
}
