import Foundation

/// Keeps cached responses in memory, evicting the least recently used entries once their total
/// `CachedResponse.byteCount` exceeds a byte limit. Contents are lost when the process ends.
///
/// ```swift
/// let cache = HTTPCache(storage: MemoryCacheStorage(byteLimit: 20 * 1024 * 1024))
/// ```
public actor MemoryCacheStorage: CacheStorage {
    /// The byte limit, in bytes; an entry larger than this is never kept.
    package let byteLimit: Int

    private var entries: [CacheKey: [String: CachedResponse]] = [:]
    private var lru = LRUIndex<EntryID>()

    /// Creates an empty storage.
    /// - Parameter byteLimit: Maximum total size of the entries, in bytes; 20 MiB by default.
    public init(byteLimit: Int = 20 * 1024 * 1024) {
        self.byteLimit = max(0, byteLimit)
    }

    public func responses(for key: CacheKey) -> [CachedResponse] {
        guard let variants = entries[key] else { return [] }
        for variant in variants.keys { lru.touch(EntryID(key: key, variant: variant)) }
        return variants.values.sorted { $0.responseTime > $1.responseTime }
    }

    public func store(_ response: CachedResponse, for key: CacheKey) {
        let id = EntryID(key: key, variant: response.variantID)
        let cost = response.byteCount
        guard cost <= byteLimit else {
            remove(id)
            return
        }
        entries[key, default: [:]][id.variant] = response
        lru.insert(id, cost: cost)
        while lru.totalCost > byteLimit, let victim = lru.removeOldest() {
            drop(victim)
        }
    }

    public func removeResponses(for key: CacheKey) {
        guard let variants = entries.removeValue(forKey: key) else { return }
        for variant in variants.keys { lru.remove(EntryID(key: key, variant: variant)) }
    }

    public func removeResponses(forURL url: String) {
        for key in entries.keys where key.url == url { removeResponses(for: key) }
    }

    public func removeAll(partition: String) {
        for key in entries.keys where key.partition == partition { removeResponses(for: key) }
    }

    public func removeAll() {
        entries.removeAll()
        lru.removeAll()
    }

    public func totalByteCount() -> Int { lru.totalCost }

    /// Number of stored variants across all keys.
    package var count: Int { lru.count }

    private func remove(_ id: EntryID) {
        lru.remove(id)
        drop(id)
    }

    /// Removes the entry from the dictionary only (the LRU already let go of it).
    private func drop(_ id: EntryID) {
        entries[id.key]?[id.variant] = nil
        if entries[id.key]?.isEmpty == true { entries[id.key] = nil }
    }
}

/// One stored variant: its key and ``CachedResponse/variantID``.
struct EntryID: Hashable, Sendable, Codable {
    var key: CacheKey
    var variant: String
}
