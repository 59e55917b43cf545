import Foundation

/// Keeps cached responses on disk, one file per entry, so they survive app restarts.
///
/// - Each entry is written to a temporary file and renamed into place, so a reader never sees a
///   half-written entry (`rename(2)` is atomic within a directory).
/// - The index (which entries exist, their sizes and recency) is rebuilt from the directory on
///   first use by reading each file's metadata; files that are truncated, corrupt or of an unknown
///   format are deleted rather than trusted, and so are temporary files left by a crash.
/// - When the total size exceeds `byteLimit`, least recently used entries are deleted. Recency
///   is tracked in memory; after a restart it starts from the files' modification dates.
/// - File I/O runs on this actor, whose jobs run on a serial dispatch queue of its own, never on
///   Swift's cooperative pool: a write can wait hundreds of milliseconds for a busy disk (measured:
///   0.6-1.3 s of pool lateness with a one-thread pool while builds wrote to the same disk).
///   Responses larger than the cache's `maxEntryBytes` never reach storage.
///
/// Use a directory the app owns, such as `Caches/Courier/HTTP`; the storage creates it.
public actor DiskCacheStorage: CacheStorage {
    /// The directory holding the entry files.
    package nonisolated let directory: URL
    /// The byte limit, in bytes (file sizes).
    package nonisolated let byteLimit: Int

    private struct Record: Sendable {
        var fileName: String
        var size: Int
    }

    private var records: [EntryID: Record] = [:]
    private var variantsByKey: [CacheKey: Set<String>] = [:]
    private var lru = LRUIndex<EntryID>()
    private var isLoaded = false
    private var fileManager: FileManager { FileManager.default }
    private nonisolated let executor = BlockingWorkExecutor(label: "courier.cache.disk")

    /// The serial dispatch queue this storage's file I/O runs on (see the type's documentation).
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    static let entryExtension = "entry"

    /// Creates a storage in `directory`; nothing is read until the first use.
    ///
    /// - Parameters:
    ///   - directory: Where entry files live; created when missing.
    ///   - byteLimit: Maximum total size of the entry files, in bytes; 50 MiB by default.
    public init(directory: URL, byteLimit: Int = 50 * 1024 * 1024) {
        self.directory = directory
        self.byteLimit = max(0, byteLimit)
    }

    // MARK: CacheStorage

    public func responses(for key: CacheKey) -> [CachedResponse] {
        loadIfNeeded()
        guard let variants = variantsByKey[key] else { return [] }
        var found: [CachedResponse] = []
        for variant in variants {
            let id = EntryID(key: key, variant: variant)
            guard let record = records[id] else { continue }
            let url = directory.appendingPathComponent(record.fileName)
            guard let data = try? Data(contentsOf: url),
                let (storedKey, response) = try? DiskEntryCodec.decode(data),
                storedKey == key, response.variantID == variant
            else {
                delete(id)
                continue
            }
            lru.touch(id)
            found.append(response)
        }
        return found.sorted { $0.responseTime > $1.responseTime }
    }

    public func store(_ response: CachedResponse, for key: CacheKey) {
        loadIfNeeded()
        let id = EntryID(key: key, variant: response.variantID)
        guard let data = try? DiskEntryCodec.encode(response, key: key), data.count <= byteLimit else {
            delete(id)
            return
        }
        let fileName = Self.fileName(for: id)
        guard writeAtomically(data, to: fileName) else {
            delete(id)
            return
        }
        index(id, Record(fileName: fileName, size: data.count), asNewest: true)
        evictIfNeeded()
    }

    public func removeResponses(for key: CacheKey) {
        loadIfNeeded()
        for variant in variantsByKey[key] ?? [] { delete(EntryID(key: key, variant: variant)) }
    }

    /// Removes the URL's entries in every partition, also those another instance on the same
    /// directory (an app extension) wrote since this one read it: a write to the URL in one must
    /// not leave the other serving what it stored before.
    public func removeResponses(forURL url: String) {
        indexFilesWrittenElsewhere()
        for key in variantsByKey.keys where key.url == url { removeResponses(for: key) }
    }

    /// Removes every entry of `partition` (a sign-out), also those another instance on the same
    /// directory (an app extension, a second client) wrote since this one read it.
    public func removeAll(partition: String) {
        reindex()
        for key in variantsByKey.keys where key.partition == partition { removeResponses(for: key) }
    }

    /// Removes every entry, also those another instance on the same directory wrote since this one
    /// read it.
    public func removeAll() {
        reindex()
        for id in Array(records.keys) { delete(id) }
    }

    public func totalByteCount() -> Int {
        loadIfNeeded()
        return lru.totalCost
    }

    /// Number of stored variants across all keys.
    package var count: Int {
        loadIfNeeded()
        return lru.count
    }

    /// The file that holds (or would hold) `key`'s variant `variantID`; for tests and tools.
    package nonisolated func fileURL(for key: CacheKey, variantID: String = "") -> URL {
        directory.appendingPathComponent(Self.fileName(for: EntryID(key: key, variant: variantID)))
    }

    // MARK: Index

    /// Rebuilds the index from the directory once: valid entries are indexed oldest first by
    /// modification date; anything else is deleted.
    private func loadIfNeeded() {
        guard !isLoaded else { return }
        isLoaded = true
        try? fileManager.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: AtomicFile.folderAttributes)
        let names = (try? fileManager.contentsOfDirectory(atPath: directory.path)) ?? []
        var found: [(EntryID, Record, Date)] = []
        for name in names {
            guard name.hasSuffix("." + Self.entryExtension) else {
                if name.hasPrefix(AtomicFile.temporaryPrefix) {
                    try? fileManager.removeItem(at: directory.appendingPathComponent(name))
                }
                continue
            }
            if let entry = readEntry(name) { found.append(entry) }
        }
        for (id, record, _) in found.sorted(by: { $0.2 < $1.2 }) {
            index(id, record, asNewest: true)
        }
        evictIfNeeded()
    }

    /// Adds the entry files this instance does not know (another instance wrote them since this
    /// one read the directory) to the index, without rereading the known ones.
    private func indexFilesWrittenElsewhere() {
        loadIfNeeded()
        let known = Set(records.values.map(\.fileName))
        let names = (try? fileManager.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where name.hasSuffix("." + Self.entryExtension) && !known.contains(name) {
            if let (id, record, _) = readEntry(name) { index(id, record, asNewest: true) }
        }
    }

    /// The index entry of the entry file `name` and its modification date; `nil` (the file
    /// deleted) when it is unreadable, damaged, or not named after what it holds.
    private func readEntry(_ name: String) -> (EntryID, Record, Date)? {
        let url = directory.appendingPathComponent(name)
        guard let attributes = try? fileManager.attributesOfItem(atPath: url.path),
            let size = (attributes[.size] as? NSNumber)?.intValue,
            let metadata = Self.readMetadata(url, size: size)
        else {
            try? fileManager.removeItem(at: url)
            return nil
        }
        let id = EntryID(key: metadata.key, variant: metadata.variant)
        guard Self.fileName(for: id) == name else {
            try? fileManager.removeItem(at: url)
            return nil
        }
        return (id, Record(fileName: name, size: size), attributes[.modificationDate] as? Date ?? .distantPast)
    }

    /// Reads the directory again: the index is built once, and entries another instance wrote
    /// later are not in it — a removal that must not leave them (a sign-out) starts here.
    private func reindex() {
        records = [:]
        variantsByKey = [:]
        lru = LRUIndex()
        isLoaded = false
        loadIfNeeded()
    }

    private static func readMetadata(_ url: URL, size: Int) -> DiskEntryCodec.Metadata? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { _ = Result { try handle.close() } }  // read only: a failed close loses nothing
        return try? DiskEntryCodec.decodeMetadata(from: handle, fileSize: size)
    }

    private func index(_ id: EntryID, _ record: Record, asNewest: Bool) {
        records[id] = record
        variantsByKey[id.key, default: []].insert(id.variant)
        lru.insert(id, cost: record.size)
    }

    private func evictIfNeeded() {
        while lru.totalCost > byteLimit, let victim = lru.oldestKey {
            delete(victim)
        }
    }

    /// Removes the entry from the index and deletes its file.
    private func delete(_ id: EntryID) {
        lru.remove(id)
        let record = records.removeValue(forKey: id)
        variantsByKey[id.key]?.remove(id.variant)
        if variantsByKey[id.key]?.isEmpty == true { variantsByKey[id.key] = nil }
        let fileName = record?.fileName ?? Self.fileName(for: id)
        try? fileManager.removeItem(at: directory.appendingPathComponent(fileName))
    }

    // MARK: Files

    static func fileName(for id: EntryID) -> String {
        StableHash.hex128("\(id.key.partition)\u{0}\(id.key.url)\u{0}\(id.variant)") + "." + entryExtension
    }

    /// Writes `data` atomically to `fileName`; `false` when the disk refused it.
    private func writeAtomically(_ data: Data, to fileName: String) -> Bool {
        (try? AtomicFile.write(data, to: directory.appendingPathComponent(fileName))) != nil
    }
}
