import Foundation

/// A saved value and when it was saved — what a screen shows before the network answers.
public struct Snapshot<Value: Sendable>: Sendable {
    /// The saved value.
    public var value: Value
    /// When it was saved, on the store's clock.
    public var savedAt: Date

    /// Creates a snapshot.
    public init(value: Value, savedAt: Date) {
        self.value = value
        self.savedAt = savedAt
    }

    /// Time between ``savedAt`` and `now` (millisecond resolution), never negative; at most
    /// `Int64.max` milliseconds (a `savedAt` read from a damaged file may lie ages back).
    public func age(at now: Date = Date()) -> Duration {
        let milliseconds = (max(0, now.timeIntervalSince(savedAt)) * 1000).rounded()
        return .milliseconds(milliseconds < Double(Int64.max) ? Int64(milliseconds) : Int64.max)
    }
}

extension Snapshot: Equatable where Value: Equatable {}
extension Snapshot: Hashable where Value: Hashable {}

/// One step of a snapshot-first read (see ``SnapshotStore/snapshotFirst(key:as:maxSnapshotAge:fetch:)``).
public enum SnapshotState<Value: Sendable>: Sendable {
    /// The saved snapshot, shown while the network is asked; `age` is measured at the time
    /// it was read.
    case snapshot(Snapshot<Value>, age: Duration)
    /// The value just fetched from the network, already saved as the new snapshot (unless the
    /// save failed, or the key was written while it was fetched: see
    /// ``SnapshotStore/snapshotFirst(key:as:maxSnapshotAge:fetch:)``).
    case fresh(Snapshot<Value>)

    /// The value of either state.
    public var value: Value {
        switch self {
        case .snapshot(let snapshot, _): return snapshot.value
        case .fresh(let snapshot): return snapshot.value
        }
    }

    /// `true` for ``fresh(_:)``.
    public var isFresh: Bool {
        if case .fresh = self { return true }
        return false
    }
}

extension SnapshotState: Equatable where Value: Equatable {}
