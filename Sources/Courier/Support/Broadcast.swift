import Foundation

/// Fans values out to any number of `AsyncStream` subscribers, optionally replaying the latest
/// value to a new subscriber (connection states). Nothing is dropped: each subscriber has its own
/// ``DeliveryQueue``. With a `limit`, ``waitForRoom()`` lets the producer wait while a subscriber
/// has more than `limit` of weight (payload bytes) not yet taken, so a slow subscriber slows the
/// producer (and, through it, the socket) instead of growing memory; without one, buffers are
/// unbounded. Once a value is yielded with `finishing`, every subscriber finishes and later values
/// are ignored. Shared by the WebSocket client (CourierRealtime) and the Server-Sent Events feed.
package final class Broadcast<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var latest: Value?
        var finished = false
        var subscribers: [Int: DeliveryQueue<Value>] = [:]
        var nextID = 0
        /// Whether ``waitForRoom()`` waits (see ``stopHoldingBack()``).
        var holdsBack = true
    }

    private let state: Locked<State>
    private let replaysLatest: Bool
    private let limit: Int?
    private let weight: @Sendable (Value) -> Int

    /// Creates a broadcast; `initial` is the latest value before anything is yielded.
    ///
    /// - Parameters:
    ///   - limit: the weight one subscriber may have waiting before ``waitForRoom()`` waits; nil
    ///     never waits (unbounded buffers).
    ///   - weight: a value's weight (its payload bytes); 1 by default.
    package init(
        replaysLatest: Bool, initial: Value? = nil, limit: Int? = nil, weight: @escaping @Sendable (Value) -> Int = { _ in 1 }
    ) {
        self.replaysLatest = replaysLatest
        self.limit = limit
        self.weight = weight
        self.state = Locked(State(latest: initial))
    }

    /// The value yielded last (or the initial one).
    package var latest: Value? { state.withLock { $0.latest } }

    /// A new subscriber: the latest value first when replaying, then every later one. Its stream
    /// ends when its task is cancelled or it is released.
    package func stream() -> AsyncStream<Value> {
        let id = state.withLock { state -> Int in
            defer { state.nextID += 1 }
            return state.nextID
        }
        let queue = DeliveryQueue<Value>(limit: limit) { [weak self] in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        state.withLock { state in
            if replaysLatest, let latest = state.latest { queue.push(latest, weight: weight(latest)) }
            if !state.holdsBack { queue.stopHoldingBack() }
            if state.finished {
                queue.finish()
            } else {
                state.subscribers[id] = queue
            }
        }
        return queue.makeStream()
    }

    /// Publishes `value` unless the broadcast finished or `shouldPublish(latest)` says no (decided
    /// under the lock, so concurrent publishers cannot both pass); `finishing` ends every
    /// subscriber after `value`. Never waits (see ``waitForRoom()``).
    package func yield(_ value: Value, finishing: Bool = false, when shouldPublish: (Value?) -> Bool = { _ in true }) {
        let subscribers: [DeliveryQueue<Value>] = state.withLock { state in
            guard !state.finished, shouldPublish(state.latest) else { return [] }
            state.latest = value
            state.finished = finishing
            defer { if finishing { state.subscribers = [:] } }
            return Array(state.subscribers.values)
        }
        guard !subscribers.isEmpty else { return }
        let weight = self.weight(value)
        for subscriber in subscribers {
            subscriber.push(value, weight: weight)
            if finishing { subscriber.finish() }
        }
    }

    /// Returns once no subscriber has more than the limit waiting (at once without a limit), when
    /// holding back stopped, or when the calling task is cancelled.
    package func waitForRoom() async {
        guard limit != nil else { return }
        let subscribers = state.withLock { Array($0.subscribers.values) }
        for subscriber in subscribers { await subscriber.waitForRoom() }
    }

    /// Makes ``waitForRoom()`` return at once (waking a producer in it), for every subscriber and
    /// later ones, until ``holdBack()``: a producer that must go on whatever the subscribers take
    /// (the session is ending) calls it.
    package func stopHoldingBack() {
        let subscribers = state.withLock { state in
            state.holdsBack = false
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.stopHoldingBack() }
    }

    /// Undoes ``stopHoldingBack()``.
    package func holdBack() {
        let subscribers = state.withLock { state in
            state.holdsBack = true
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.holdBack() }
    }

    /// Ends every subscriber's stream without a last value; later values are ignored and a later
    /// subscriber gets only the latest value (when replaying).
    package func finish() {
        let subscribers: [DeliveryQueue<Value>] = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
