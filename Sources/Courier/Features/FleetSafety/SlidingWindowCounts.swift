/// Two counters over a sliding time window, kept in ten buckets that expire: the memory of
/// ``RetryBudgetLedger`` (first attempts, retries) and ``CircuitBreakerState`` (successes,
/// failures). A pure value; `now` is any monotonic offset from the caller's clock.
package struct SlidingWindowCounts: Sendable, Hashable {
    private static let bucketCount = 10

    private let width: Double
    private var buckets: [Bucket]

    private struct Bucket: Sendable, Hashable {
        var index: Int64 = .min
        var first = 0
        var second = 0
    }

    /// Counts over the last `window` (at least 1 ms).
    package init(window: Duration) {
        width = max(0.001, Self.seconds(window)) / Double(Self.bucketCount)
        buckets = Array(repeating: Bucket(), count: Self.bucketCount)
    }

    /// Adds to the counters at `now`.
    package mutating func add(first: Int = 0, second: Int = 0, at now: Duration) {
        let index = bucketIndex(of: now)
        let count = Int64(Self.bucketCount)
        let slot = Int(((index % count) + count) % count)
        if buckets[slot].index != index { buckets[slot] = Bucket(index: index) }
        buckets[slot].first += first
        buckets[slot].second += second
    }

    /// Takes back `second` counted at `time`, when that count still falls in the window (a count
    /// whose bucket was reused for a later time has expired: nothing to take back).
    package mutating func subtract(second: Int, countedAt time: Duration) {
        let index = bucketIndex(of: time)
        let count = Int64(Self.bucketCount)
        let slot = Int(((index % count) + count) % count)
        guard buckets[slot].index == index else { return }
        buckets[slot].second = max(0, buckets[slot].second - second)
    }

    /// The sums of both counters over the window ending at `now`.
    package func totals(at now: Duration) -> (first: Int, second: Int) {
        let current = bucketIndex(of: now)
        var totals = (first: 0, second: 0)
        for bucket in buckets where bucket.index > current - Int64(Self.bucketCount) && bucket.index <= current {
            totals.first += bucket.first
            totals.second += bucket.second
        }
        return totals
    }

    /// Forgets everything.
    package mutating func reset() {
        buckets = Array(repeating: Bucket(), count: Self.bucketCount)
    }

    private func bucketIndex(of now: Duration) -> Int64 {
        let ratio = Self.seconds(now) / width
        guard ratio.isFinite, abs(ratio) < 1e18 else { return 0 }
        return Int64(ratio.rounded(.down))
    }

    package static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components  // one 128-bit division, not two
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
