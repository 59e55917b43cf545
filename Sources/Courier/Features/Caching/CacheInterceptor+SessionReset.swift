extension CacheInterceptor: SessionResettable {
    /// Removes the cached responses of the current account — the partition
    /// ``HTTPCache/Configuration/partition`` returns now — and cancels its background
    /// revalidations, so ``APIClient/resetSession(also:)`` clears the cache with everything else.
    /// Other accounts' partitions are kept. Call it before the partition switches to the next account.
    public func resetSession() async throws {
        await cache.removeAll(partition: cache.currentPartition)
    }

    /// The current partition of the cache's storage.
    public var sessionStateIdentities: [SessionStateIdentity] {
        let partition = cache.currentPartition
        let storage: String
        if type(of: cache.storage) is AnyObject.Type {
            storage = "\(ObjectIdentifier(cache.storage as AnyObject))"
        } else {
            storage = "\(ObjectIdentifier(cache))"
        }
        return [
            SessionStateIdentity(
                key: "cache:\(storage)|\(partition)",
                label: "the cache partition '\(partition)' (name partitions after APIEnvironment.storageNamespace)")
        ]
    }
}

extension SnapshotStore: SessionResettable {
    /// Deletes every snapshot of this store (``removeAll()``); use one store per account.
    public func resetSession() async throws {
        removeAll()
    }
}
