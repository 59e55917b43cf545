import Courier

/// Fans values out to any number of `AsyncStream` subscribers; optionally replays the latest value
/// to a new subscriber (connection state). Buffers are unbounded: nothing is dropped.
final class Broadcast<Value: Sendable>: Sendable {
    private struct State: Sendable {
        var latest: Value?
        var finished = false
        var subscribers: [Int: AsyncStream<Value>.Continuation] = [:]
        var nextID = 0
    }

    private let state = Locked(State())
    private let replaysLatest: Bool

    init(replaysLatest: Bool) {
        self.replaysLatest = replaysLatest
    }

    func stream() -> AsyncStream<Value> {
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

    func yield(_ value: Value) {
        let subscribers = state.withLock { state in
            state.latest = value
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(value) }
    }
}
