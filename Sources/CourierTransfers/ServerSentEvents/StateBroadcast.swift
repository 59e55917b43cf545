import Courier

/// A connection state fanned out to observers (each gets the current state first): equal
/// consecutive states are published once, and a final state finishes every observer.
final class StateBroadcast<Value: Sendable & Equatable>: Sendable {
    private let broadcast: Broadcast<Value>
    private let initial: Value
    private let isFinal: @Sendable (Value) -> Bool

    init(initial: Value, isFinal: @escaping @Sendable (Value) -> Bool) {
        self.broadcast = Broadcast(replaysLatest: true, initial: initial)
        self.initial = initial
        self.isFinal = isFinal
    }

    var latest: Value { broadcast.latest ?? initial }

    func stream() -> AsyncStream<Value> { broadcast.stream() }

    /// Publishes `value` unless it equals the latest one or a final value was published.
    func publish(_ value: Value) {
        broadcast.yield(value, finishing: isFinal(value), when: { $0 != value })
    }
}
