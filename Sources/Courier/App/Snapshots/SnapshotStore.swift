import Foundation

/// Saves `Codable` values as files so screens can show the last known data at once — the app's
/// source of truth between launches, independent of the HTTP cache.
///
/// Each key is one file (`<hash>.snapshot`, JSON with the key, `savedAt` and the value), written
/// atomically (temporary file, then rename). Use one store per account — e.g.
/// `SnapshotStore(directory: base.appendingPathComponent(userID))` — and call ``removeAll()`` at
/// logout. Stores on the same folder keep one order of writes, the rules below holding across
/// them: in one process (two screens each with a store of the account) and across processes (an
/// app and its widget with the folder in their app group container), where the order lives in a
/// `flock(2)`-guarded `snapshots.lock` file in the folder.
///
/// ## Invalidation rules
/// - A successful fetch replaces the snapshot (``save(_:key:)``) — unless the key was written
///   since the fetch started (a ``save(_:key:)``, a ``remove(key:)``, or the saved value of a
///   read that started later): a value read before that write never overwrites it.
/// - A failed fetch never touches the snapshot: the screen keeps what it showed.
/// - A snapshot older than the reader's `maxAge` is not returned (and is deleted), so very old
///   data never flashes on screen.
/// - A snapshot that no longer decodes (the model changed) is deleted and treated as absent.
/// - After a mutation the app knows makes a snapshot wrong, it calls ``remove(key:)`` — or saves
///   the mutation's result.
/// - At logout, ``removeAll()`` deletes every snapshot of the store.
///
/// File I/O runs on a serial dispatch queue of the store's own, never on Swift's cooperative pool.
public actor SnapshotStore {
    /// The directory holding the snapshot files.
    package nonisolated let directory: URL
    private nonisolated let executor = BlockingWorkExecutor(label: "courier.snapshots")

    /// The serial dispatch queue the store's file I/O runs on.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
    private let now: @Sendable () -> Date
    /// The order of the folder's writes, shared with every store on the same folder in this
    /// process; found at the first use (``sharedFolder()``).
    private var folder: SnapshotFolder?

    static let fileExtension = "snapshot"

    /// Creates a store; nothing is read until the first load.
    /// - Parameters:
    ///   - directory: Where snapshot files live; created on the first use.
    ///   - now: The clock for ``Snapshot/savedAt`` and ages; the wall clock by default.
    public init(directory: URL, now: @escaping @Sendable () -> Date = { Date() }) {
        self.init(directory: directory, now: now, sharesMemory: true)
    }

    /// A store that, with `sharesMemory` off, shares nothing in memory with other stores on its
    /// folder — as a store of another process.
    package init(directory: URL, now: @escaping @Sendable () -> Date, sharesMemory: Bool) {
        self.directory = directory
        self.now = now
        self.folder = sharesMemory ? nil : SnapshotFolder(folder: directory)
    }

    private struct Envelope<Value: Codable>: Codable {
        var key: String
        var savedAt: Date
        var value: Value
        /// The place of the write in the folder's order (``SnapshotCounters/order``); missing in
        /// files written before processes shared it, or without a lock file.
        var order: UInt64?
    }

    /// A snapshot file's key and order, without its value.
    private struct EnvelopeHead: Decodable {
        var key: String
        var order: UInt64?
    }

    /// The snapshot saved under `key`, or `nil` when there is none, it no longer decodes as
    /// `Value`, or it is older than `maxAge` (the last two are deleted). Under a `maxAge`, a
    /// snapshot saved at a time after now (the clock was set back since) counts as too old.
    public func load<Value: Codable & Sendable>(_ type: Value.Type, key: String, maxAge: Duration? = nil) -> Snapshot<Value>? {
        let url = fileURL(for: key)
        guard let data = try? Data(contentsOf: url) else { return nil }
        // A snapshot an earlier version wrote 0644 holds the user's data too.
        AtomicFile.makePrivate(url)
        guard let envelope = try? Self.decoder().decode(Envelope<Value>.self, from: data), envelope.key == key else {
            try? FileManager.default.removeItem(at: url)
            return nil
        }
        let snapshot = Snapshot(value: envelope.value, savedAt: envelope.savedAt)
        let current = now()
        // Saved "in the future": the device clock was ahead then (or is behind now), so the
        // snapshot's real age is unknown — never taken for a new one under a `maxAge`.
        let unknownAge = envelope.savedAt.timeIntervalSince(current) > 1
        if let maxAge, unknownAge || snapshot.age(at: current) > maxAge {
            try? FileManager.default.removeItem(at: url)
            return nil
        }
        return snapshot
    }

    /// Saves `value` under `key`, replacing any previous snapshot atomically.
    /// - Returns: The saved snapshot, stamped with the store's current time.
    /// - Throws: `EncodingError` when `value` cannot be encoded, or the file system's error.
    @discardableResult
    public func save<Value: Codable & Sendable>(_ value: Value, key: String) throws -> Snapshot<Value> {
        let folder = sharedFolder()
        return try folder.state.withLock { state in
            state.order += 1
            state.lastWrite[key] = state.order
            return try folder.changingShared { shared in
                shared?.order &+= 1
                return try write(value, key: key, order: shared?.order)
            }
        }
    }

    private func write<Value: Codable & Sendable>(_ value: Value, key: String, order: UInt64?) throws -> Snapshot<Value> {
        let savedAt = now()
        let data = try Self.encoder().encode(Envelope(key: key, savedAt: savedAt, value: value, order: order))
        try AtomicFile.write(data, to: fileURL(for: key))
        return Snapshot(value: value, savedAt: savedAt)
    }

    /// Deletes the snapshot saved under `key`, if any.
    public func remove(key: String) {
        let folder = sharedFolder()
        folder.state.withLock { state in
            state.order += 1
            state.lastWrite[key] = state.order
            do {
                try folder.changingShared { shared in
                    if var counters = shared {
                        counters.order &+= 1
                        counters.removals[SnapshotCounters.bucket(of: key)] = counters.order
                        shared = counters
                    }
                    try? FileManager.default.removeItem(at: fileURL(for: key))
                }
            } catch {
                // The removal is not on file for other processes (their reads may save over it);
                // this process's order has it.
            }
        }
    }

    /// When a read began: the store's generation and the read's place in the order of writes, in
    /// this process and in the folder's lock file (`nil` without one).
    struct ReadStart: Sendable {
        let generation: Int
        let order: Int
        var shared: SnapshotCounters?
    }

    /// What ``save(_:key:readStart:)`` did with a read's value.
    enum ReadSave<Value: Sendable>: Sendable {
        /// Saved as the key's snapshot.
        case saved(Snapshot<Value>)
        /// Not saved: the key was written since the read started (the stored snapshot is newer).
        case superseded
        /// Not saved: ``removeAll()`` ran since the read started.
        case cleared
    }

    /// Marks the start of a read of the network (see ``save(_:key:readStart:)``).
    func beginRead() -> ReadStart {
        let folder = sharedFolder()
        return folder.state.withLock { state in
            state.order += 1
            var start = ReadStart(generation: state.generation, order: state.order)
            do {
                start.shared = try folder.changingShared { shared in
                    shared?.order &+= 1
                    return shared
                }
            } catch {
                // Not numbered on file: this read is ordered within this process only.
            }
            return start
        }
    }

    /// Saves the value of a read that began at `start`, unless ``removeAll()`` ran since, or the
    /// key was written since (then what is stored is newer than the read's value).
    ///
    /// Across processes: unless the folder was cleared since, the key's file was saved at a later
    /// place in the order, or — with no file — a key of its removal bucket was removed since.
    func save<Value: Codable & Sendable>(_ value: Value, key: String, readStart start: ReadStart) throws -> ReadSave<Value> {
        let folder = sharedFolder()
        return try folder.state.withLock { state in
            guard state.generation == start.generation else { return .cleared }
            guard state.lastWrite[key, default: 0] < start.order else { return .superseded }
            return try folder.changingShared { shared in
                if let counters = shared, let began = start.shared {
                    guard counters.generation == began.generation else { return .cleared }
                    if let stored = storedOrder(of: key) {
                        guard stored < began.order else { return .superseded }
                    } else {
                        guard counters.removals[SnapshotCounters.bucket(of: key)] < began.order else { return .superseded }
                    }
                }
                state.lastWrite[key] = start.order
                return .saved(try write(value, key: key, order: start.shared?.order))
            }
        }
    }

    /// The order `key`'s file was saved at: `nil` when there is no file, 0 for a file that does not
    /// say (written before the order was kept on file) or cannot be read.
    private func storedOrder(of key: String) -> UInt64? {
        let url = fileURL(for: key)
        guard let data = try? Data(contentsOf: url) else {
            return FileManager.default.fileExists(atPath: url.path) ? 0 : nil
        }
        return (try? Self.decoder().decode(EnvelopeHead.self, from: data)).flatMap(\.order) ?? 0
    }

    /// The highest order a snapshot file in `directory` was saved at (0 when none says).
    static func highestStoredOrder(in directory: URL) -> UInt64 {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasSuffix("." + fileExtension) }.compactMap { name in
            (try? Data(contentsOf: directory.appendingPathComponent(name)))
                .flatMap { try? decoder().decode(EnvelopeHead.self, from: $0) }?.order
        }.max() ?? 0
    }

    /// Deletes every snapshot of this store (logout). A ``snapshotFirst(key:as:maxSnapshotAge:fetch:)``
    /// fetch that is still running does not save its value afterwards.
    ///
    /// Stores of other processes on the folder see it too: their reads under way save nothing.
    public func removeAll() {
        let folder = sharedFolder()
        folder.state.withLock { state in
            state.generation += 1
            state.lastWrite.removeAll()
            do {
                try folder.changingShared { shared in
                    shared?.generation &+= 1
                    shared?.order &+= 1
                    removeFiles()
                }
            } catch {
                // Not on file for other processes: their reads under way may still save.
            }
        }
    }

    /// Deletes every snapshot file and temporary file of the folder.
    private func removeFiles() {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasSuffix("." + Self.fileExtension) || name.hasPrefix(AtomicFile.temporaryPrefix) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    /// The order of writes shared by every store on this store's folder, found (and the folder
    /// created) the first time it is needed, on the store's queue.
    private func sharedFolder() -> SnapshotFolder {
        if let folder { return folder }
        let found = SnapshotFolder.shared(folder: directory)
        folder = found
        return found
    }

    /// The store's current time.
    package func currentDate() -> Date { now() }

    /// The file of `key`.
    package nonisolated func fileURL(for key: String) -> URL {
        directory.appendingPathComponent(StableHash.hex128(key) + "." + Self.fileExtension)
    }

    private static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .millisecondsSince1970
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    private static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        return decoder
    }
}

/// The order of the writes to one snapshot folder, shared by every ``SnapshotStore`` on that folder
/// in this process: a save, a removal or a ``SnapshotStore/removeAll()`` (a logout) through one
/// store keeps a read that started before it through another from saving its older value.
final class SnapshotFolder: Sendable {
    struct State: Sendable {
        /// Bumped by ``SnapshotStore/removeAll()``: a fetch that started before a logout must not
        /// save the previous account's data after it.
        var generation = 0
        /// Numbers, in order, the start of each read and each save and removal.
        var order = 0
        /// Per key, the ``order`` of its latest write: a save or removal, or the start of the read
        /// whose value was saved last. A read that started before it saves nothing.
        var lastWrite: [String: Int] = [:]
    }

    /// Held for each check and the write it allows (file I/O included: the stores run it on their
    /// own queues, off the cooperative pool), so no write comes between them.
    let state = Locked(State())

    /// The folder.
    let directory: URL

    /// The folder's `snapshots.lock`, which orders the writes of every process on the folder
    /// (``SnapshotCounters``); `nil` when it cannot be opened (then this process's order only).
    let lockFile: CounterLockFile?

    /// The state of the folder at `url`, its lock file opened.
    init(folder url: URL) {
        directory = url
        lockFile = CounterLockFile.snapshots(url.appendingPathComponent("snapshots.lock"))
    }

    deinit { lockFile?.close() }

    /// Runs `body` holding the lock file, with its counters (`nil` without a lock file); the
    /// counters `body` changed are written back.
    /// - Throws: What `body` throws, or `POSIXError` when the counters cannot be written.
    func changingShared<T>(_ body: (inout SnapshotCounters?) throws -> T) throws -> T {
        guard let lockFile else {
            var none: SnapshotCounters?
            return try body(&none)
        }
        return try lockFile.withLock(exclusive: true) { _ in
            let before = SnapshotCounters(lockFile.read())
            var counters: SnapshotCounters? = before
            if before.order == 0 {
                // A new lock file — the folder's first, or one deleted or emptied since: its order
                // goes on past the snapshot files' orders, or every read would take them for newer.
                counters?.order = SnapshotStore.highestStoredOrder(in: directory)
            }
            let result = try body(&counters)
            if let counters, counters != before { try lockFile.write(counters.values) }
            return result
        }
    }

    private static let registry = FolderRegistry<SnapshotFolder>()

    /// The state of the folder at `url`, shared with every store on it however its path is
    /// spelled (see ``FolderIdentity/key(of:)``).
    static func shared(folder url: URL) -> SnapshotFolder {
        registry.value(for: url) { SnapshotFolder(folder: url) }
    }
}
