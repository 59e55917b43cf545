/// Recency order and byte costs of cache entries, with O(1) touch, insert, remove and eviction of
/// the least recently used entry. A doubly linked list threaded through a dictionary.
struct LRUIndex<Key: Hashable & Sendable>: Sendable {
    private struct Node: Sendable {
        var cost: Int
        var newer: Key?
        var older: Key?
    }

    private var nodes: [Key: Node] = [:]
    private var newest: Key?
    private var oldest: Key?
    /// Sum of the costs of all entries, in bytes.
    private(set) var totalCost = 0

    /// Number of entries.
    var count: Int { nodes.count }

    /// `true` when `key` is present.
    func contains(_ key: Key) -> Bool { nodes[key] != nil }

    /// Every key, most recently used first.
    var keysByRecency: [Key] {
        var keys: [Key] = []
        keys.reserveCapacity(nodes.count)
        var cursor = newest
        while let key = cursor, let node = nodes[key] {
            keys.append(key)
            cursor = node.older
        }
        return keys
    }

    /// Inserts `key` as the most recent entry with `cost` bytes, or updates its cost and recency.
    mutating func insert(_ key: Key, cost: Int) { link(key, cost: cost, asNewest: true) }

    /// Inserts `key` as the least recent entry (used when rebuilding an index from older state).
    mutating func insertAsOldest(_ key: Key, cost: Int) { link(key, cost: cost, asNewest: false) }

    /// Links `key` in at the newest or the oldest end of the list (first unlinking it when present).
    private mutating func link(_ key: Key, cost: Int, asNewest: Bool) {
        if nodes[key] != nil { remove(key) }
        let end = asNewest ? newest : oldest
        nodes[key] = asNewest ? Node(cost: cost, newer: nil, older: end) : Node(cost: cost, newer: end, older: nil)
        if let end {
            if asNewest { nodes[end]?.newer = key } else { nodes[end]?.older = key }
        } else {
            // The list was empty: `key` is both ends.
            newest = key
            oldest = key
        }
        if asNewest { newest = key } else { oldest = key }
        totalCost += cost
    }

    /// Marks `key` as the most recently used entry; no effect when absent.
    mutating func touch(_ key: Key) {
        guard let node = nodes[key], newest != key else { return }
        insert(key, cost: node.cost)
    }

    /// Removes `key`; no effect when absent.
    mutating func remove(_ key: Key) {
        guard let node = nodes.removeValue(forKey: key) else { return }
        if let newer = node.newer { nodes[newer]?.older = node.older } else { newest = node.older }
        if let older = node.older { nodes[older]?.newer = node.newer } else { oldest = node.newer }
        totalCost -= node.cost
    }

    /// The least recently used key; `nil` when empty.
    var oldestKey: Key? { oldest }

    /// Removes and returns the least recently used key; `nil` when empty.
    mutating func removeOldest() -> Key? {
        guard let key = oldest else { return nil }
        remove(key)
        return key
    }

    /// Removes everything.
    mutating func removeAll() {
        nodes.removeAll()
        newest = nil
        oldest = nil
        totalCost = 0
    }
}
