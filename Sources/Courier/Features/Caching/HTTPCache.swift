import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Courier's private HTTP cache (RFC 9111, with RFC 5861's stale extensions): the storage, the
/// account partition, the clock, and the background revalidations. The app keeps one per client
/// and passes it to the standard pipeline, which puts ``interceptors()`` in their place:
///
/// ```swift
/// let cache = HTTPCache(
///     storage: DiskCacheStorage(directory: cachesDirectory.appendingPathComponent("http")),
///     partition: { session.userID ?? "anonymous" })
/// let client = APIClient(environment: .production) { config in
///     config.interceptors = .standard(tokenManager: tokens, cache: cache)
/// }
/// // at logout:
/// await cache.removeAll(partition: userID)
/// ```
///
/// URLSession's own `URLCache` is not used: on Linux it never stores anything, and on Apple
/// platforms it can be neither partitioned per account nor told to serve stale-while-revalidate.
public final class HTTPCache: Sendable {
    /// Tunables of the cache. Defaults follow RFC 9111's suggestions.
    public struct Configuration: Sendable {
        /// Fraction of the time since `Last-Modified` used as heuristic freshness lifetime when the
        /// response gives none (RFC 9111 §4.2.2 suggests 10 %). `0.1` by default.
        public var heuristicFraction: Double = 0.1
        /// Upper bound of a heuristic freshness lifetime (RFC 9111 §4.2.2); 24 hours by default.
        public var maxHeuristicLifetime: Duration = .seconds(24 * 60 * 60)
        /// Responses with larger bodies are not stored, in bytes; 5 MiB by default.
        public var maxEntryBytes: Int = 5 * 1024 * 1024
        /// A background revalidation (`stale-while-revalidate`) is cancelled after this long.
        /// 30 seconds by default.
        public var backgroundRevalidationTimeout: Duration = .seconds(30)
        /// The account whose entries the current request reads and writes, e.g. the signed-in
        /// user's ID. `"shared"` by default: one partition for whoever is signed in, which the
        /// standard pipeline (`.standard(tokenManager:cache:)`) clears whenever its token manager's
        /// session ends — a sign-out, a session expiry, a new sign-in — before the next session's
        /// first token is handed out, so one user's responses never reach the next. A partition
        /// of the app's own (per account) is never cleared that way: each account keeps its
        /// entries, and the app clears one with ``HTTPCache/removeAll(partition:)``.
        public var partition: @Sendable () -> String = { "shared" } {
            didSet { partitionsByAccount = true }
        }
        /// Whether ``partition`` was set: the app's own partitions, kept across sessions.
        package private(set) var partitionsByAccount = false
        /// The cache's notion of "now" for age and freshness (RFC 9111 §4.2.3); the wall clock by
        /// default, injectable for tests.
        public var now: @Sendable () -> Date = { Date() }

        /// The default configuration.
        public init() {}
    }

    /// Where responses are kept.
    package let storage: any CacheStorage
    /// The configuration the cache was created with.
    package let configuration: Configuration

    let revalidations = BackgroundRevalidations()
    /// Bumped by ``removeAll(partition:)`` so responses of requests that started before a clear
    /// are not written back into the cleared partition.
    private let generations = Locked<[String: Int]>([:])
    /// Bumped per normalised URL by ``invalidate(_:)``, so a response to a request that started
    /// before an invalidation (a read answered after the write to its URL) is not stored after it.
    /// At most ``maxTrackedInvalidations`` URLs; beyond, the counts start over after a clear of
    /// the whole generation, which makes every request then running store nothing.
    private let invalidations = Locked<[String: Int]>([:])

    /// Creates a cache.
    /// - Parameters:
    ///   - storage: Where responses are kept; a 20 MiB ``MemoryCacheStorage`` by default.
    ///   - configuration: Tunables; see ``Configuration``.
    public init(storage: any CacheStorage = MemoryCacheStorage(), configuration: Configuration = Configuration()) {
        self.storage = storage
        self.configuration = configuration
    }

    /// Creates a cache whose entries are partitioned by `partition` (called once per request).
    public convenience init(storage: any CacheStorage = MemoryCacheStorage(), partition: @escaping @Sendable () -> String) {
        var configuration = Configuration()
        configuration.partition = partition
        self.init(storage: storage, configuration: configuration)
    }

    deinit {
        revalidations.cancelAll()
    }

    /// The interceptors to put in the pipeline, in order: the ``CacheInterceptor`` and, inside it,
    /// a `DeduplicationInterceptor` using the same partition, so concurrent identical misses and
    /// revalidations share one network call.
    public func interceptors() -> [any Interceptor] {
        [CacheInterceptor(cache: self), DeduplicationInterceptor(partition: configuration.partition)]
    }

    /// The partition of the current request (see ``Configuration/partition``).
    package var currentPartition: String { configuration.partition() }

    // MARK: Clearing

    /// Removes every entry of `partition` — call it at logout — and nothing else. Background
    /// revalidations of that partition are cancelled and awaited first, and responses of requests
    /// already running are not stored afterwards, so nothing of the account reappears.
    public func removeAll(partition: String) async {
        generations.withLock { $0[partition, default: 0] += 1 }
        await revalidations.cancel(partition: partition)
        await storage.removeAll(partition: partition)
    }

    /// Removes every entry of every partition and cancels all background revalidations.
    public func removeAll() async {
        generations.withLock { $0[Self.everyPartition, default: 0] += 1 }
        await revalidations.cancelAllAndWait()
        await storage.removeAll()
    }

    /// Removes the stored responses for `url` in every partition (what a successful unsafe request
    /// does automatically, RFC 9111 §4.4).
    ///
    /// A response to a request that started before the call is not stored: it may describe the
    /// resource as it was before the change that made the app invalidate it.
    public func invalidate(_ url: URL) async {
        let normalized = CacheKey.normalize(url)
        let overflowed = invalidations.withLock { counts in
            counts[normalized, default: 0] += 1
            return counts.count > Self.maxTrackedInvalidations
        }
        if overflowed {
            // First every running request's generation moves, then the counts restart.
            generations.withLock { $0[Self.everyPartition, default: 0] += 1 }
            invalidations.withLock { $0.removeAll() }
        }
        await storage.removeResponses(forURL: normalized)
    }

    // MARK: Background revalidation

    /// Waits until every background revalidation running now (and any they lead to) has finished.
    /// For tests and orderly shutdown; returns at once when none is running.
    package func waitForBackgroundRevalidations() async {
        await revalidations.waitForAll()
    }

    /// Number of background revalidations currently running.
    package var backgroundRevalidationCount: Int { revalidations.count }

    /// Cancels every background revalidation (they store nothing once cancelled).
    package func cancelBackgroundRevalidations() {
        revalidations.cancelAll()
    }

    // MARK: Internal

    /// How many URLs' invalidations are counted before the counts start over.
    private static let maxTrackedInvalidations = 1024

    /// The generations key that counts clears of the whole cache.
    private static let everyPartition = "\u{0}*"

    /// A token that changes whenever `partition` (or the whole cache) is cleared and, taken for a
    /// key, whenever its URL is invalidated.
    struct Generation: Hashable, Sendable {
        var partition: Int
        var all: Int
        /// Invalidations of the key's URL when taken for a key; 0 when taken for a partition.
        var url = 0
    }

    /// The current ``Generation`` of `partition`.
    func generation(of partition: String) -> Generation {
        generations.withLock { Generation(partition: $0[partition] ?? 0, all: $0[Self.everyPartition] ?? 0) }
    }

    /// The current ``Generation`` of `key`: its partition's, and the invalidations of its URL.
    func generation(of key: CacheKey) -> Generation {
        var generation = generation(of: key.partition)
        generation.url = invalidations.withLock { $0[key.url] ?? 0 }
        return generation
    }

    /// Stores `response` under `key` unless the partition was cleared since `generation` was taken,
    /// or is no longer the current one.
    ///
    /// A clear can also come between the check and the write reaching the storage (a sign-out
    /// while an old account's response is being stored): the generation is checked again after
    /// the write, and what was written is removed if it moved, so the cleared partition never
    /// keeps the previous account's response.
    ///
    /// The partition of a call is read when the call reaches the cache, its token later (the auth
    /// step is inside the cache, and may wait for a refresh): when the partition changed since,
    /// the account switched during the call, and the response may have been fetched with the next
    /// account's token — stored, the previous account would be served it. It is not stored.
    func store(_ response: CachedResponse, for key: CacheKey, generation: Generation) async {
        guard self.generation(of: key) == generation, currentPartition == key.partition else { return }
        await storage.store(response, for: key)
        if self.generation(of: key) != generation || currentPartition != key.partition {
            await storage.removeResponses(for: key)
        }
    }

    /// Freshness of `entry` now.
    func freshness(of entry: CachedResponse, at now: Date) -> Freshness {
        Freshness(
            of: entry, at: now, heuristicFraction: configuration.heuristicFraction,
            maxHeuristicLifetime: configuration.maxHeuristicLifetime / .seconds(1))
    }
}
