import Foundation

/// Fans values out to any number of `AsyncStream` subscribers, optionally replaying the latest
/// value to a new subscriber (connection states). Buffers are unbounded: nothing is dropped. Once
/// a value is yielded with `finishing`, every subscriber finishes and later values are ignored.
/// Shared by the WebSocket client (CourierRealtime) and the Server-Sent Events feed.
package final class Broadcast<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var latest: Value?
        var finished = false
        var subscribers: [Int: AsyncStream<Value>.Continuation] = [:]
        var nextID = 0
    }

    private let state: Locked<State>
    private let replaysLatest: Bool

    /// Creates a broadcast; `initial` is the latest value before anything is yielded.
    package init(replaysLatest: Bool, initial: Value? = nil) {
        self.replaysLatest = replaysLatest
        self.state = Locked(State(latest: initial))
    }

    /// The value yielded last (or the initial one).
    package var latest: Value? { state.withLock { $0.latest } }

    /// A new subscriber: the latest value first when replaying, then every later one.
    package func stream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        let id: Int? = state.withLock { state in
            if replaysLatest, let latest = state.latest { continuation.yield(latest) }
            if state.finished { return nil }
            let id = state.nextID
            state.nextID += 1
            state.subscribers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Publishes `value` unless the broadcast finished or `shouldPublish(latest)` says no (decided
    /// under the lock, so concurrent publishers cannot both pass); `finishing` ends every
    /// subscriber after `value`.
    package func yield(_ value: Value, finishing: Bool = false, when shouldPublish: (Value?) -> Bool = { _ in true }) {
        let subscribers: [AsyncStream<Value>.Continuation] = state.withLock { state in
            guard !state.finished, shouldPublish(state.latest) else { return [] }
            state.latest = value
            state.finished = finishing
            defer { if finishing { state.subscribers = [:] } }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers {
            subscriber.yield(value)
            if finishing { subscriber.finish() }
        }
    }

    /// Ends every subscriber's stream without a last value; later values are ignored and a later
    /// subscriber gets only the latest value (when replaying).
    package func finish() {
        let subscribers: [AsyncStream<Value>.Continuation] = state.withLock { state in
            state.finished = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
    }
}
