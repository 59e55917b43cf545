import Foundation

/// What processes sharing a snapshot folder (an app and its widget in an app group container)
/// count in its lock file, `snapshots.lock` (a ``CounterLockFile``), so that a read that began
/// before another process's write does not save over it: how many times the folder was cleared
/// (``SnapshotStore/removeAll()``, a logout), the order of its reads and writes, and — by key, in
/// one of ``bucketCount`` buckets — the order of the latest ``SnapshotStore/remove(key:)``. A
/// snapshot file carries the order it was saved at.
struct SnapshotCounters: Sendable, Equatable {
    /// Buckets of removal orders: two keys share one by their hash, so a removal of one can keep a
    /// read of the other that began before it from saving (its value is still shown).
    static let bucketCount = 64

    /// ``SnapshotStore/removeAll()`` calls, by any process.
    var generation: UInt64 = 0
    /// Numbers, in order, every read's start, save and removal, by any process.
    var order: UInt64 = 0
    /// Per bucket, the ``order`` of the latest removal of a key in it.
    var removals = [UInt64](repeating: 0, count: bucketCount)

    init() {}

    init(_ values: [UInt64]) {
        generation = values[0]
        order = values[1]
        removals = Array(values[2...])
    }

    /// The counters as the lock file holds them.
    var values: [UInt64] { [generation, order] + removals }

    /// The bucket of `key`.
    static func bucket(of key: String) -> Int {
        Int(StableHash.hex128(key).prefix(4), radix: 16).map { $0 % bucketCount } ?? 0
    }
}

extension CounterLockFile {
    /// A snapshot folder's lock file at `url`, or `nil` (see ``CounterLockFile/open(_:count:)``).
    static func snapshots(_ url: URL) -> CounterLockFile? { open(url, count: 2 + SnapshotCounters.bucketCount) }
}
