import Foundation

/// Where the HTTP cache keeps responses. Courier ships ``MemoryCacheStorage`` (LRU, byte limit)
/// and ``DiskCacheStorage`` (one file per entry, survives restarts); an app may add its own.
///
/// Entries are addressed by ``CacheKey`` (partition + URL); under one key a storage keeps one
/// `CachedResponse` per `CachedResponse.variantID` (RFC 9111 §4.1). Storage is best effort:
/// methods do not throw — a write that fails (disk full) simply leaves no entry, and a read of
/// a damaged entry drops it and returns nothing, so the cache falls back to the network.
public protocol CacheStorage: Sendable {
    /// Every stored variant under `key`, most recently stored first; empty on a miss. Counts as a
    /// use for LRU eviction.
    func responses(for key: CacheKey) async -> [CachedResponse]

    /// Stores `response` under `key`, replacing the variant with the same `CachedResponse.variantID`,
    /// then evicts least recently used entries until the byte limit holds.
    func store(_ response: CachedResponse, for key: CacheKey) async

    /// Removes every variant under `key`.
    func removeResponses(for key: CacheKey) async

    /// Removes every variant stored for the normalised `url` (see `CacheKey.normalize(_:)`)
    /// in every partition — how an unsafe request invalidates (RFC 9111 §4.4).
    func removeResponses(forURL url: String) async

    /// Removes every entry of `partition` (an account's logout) and nothing else.
    func removeAll(partition: String) async

    /// Removes every entry.
    func removeAll() async

    /// Total `CachedResponse.byteCount` of the stored entries, in bytes.
    func totalByteCount() async -> Int
}
