/// The latest value plus every later one, fanned out to any number of `AsyncStream` observers
/// (each gets the latest value first). Once a final value is published, observers finish and
/// nothing more is published. Buffers are unbounded: observers miss nothing.
final class StateBroadcast<Value: Sendable & Equatable>: Sendable {
    private struct State: Sendable {
        var latest: Value
        var finished = false
        var observers: [Int: AsyncStream<Value>.Continuation] = [:]
        var nextID = 0
    }

    private let state: Locked<State>
    private let isFinal: @Sendable (Value) -> Bool

    init(initial: Value, isFinal: @escaping @Sendable (Value) -> Bool) {
        state = Locked(State(latest: initial))
        self.isFinal = isFinal
    }

    var latest: Value { state.withLock { $0.latest } }

    func stream() -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self)
        let id: Int? = state.withLock { state in
            continuation.yield(state.latest)
            if state.finished { return nil }
            let id = state.nextID
            state.nextID += 1
            state.observers[id] = continuation
            return id
        }
        guard let id else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.observers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Publishes `value` unless it equals the latest one or a final value was published.
    func publish(_ value: Value) {
        let final = isFinal(value)
        let observers: [AsyncStream<Value>.Continuation] = state.withLock { state in
            guard !state.finished, state.latest != value else { return [] }
            state.latest = value
            state.finished = final
            defer { if final { state.observers = [:] } }
            return Array(state.observers.values)
        }
        for observer in observers {
            observer.yield(value)
            if final { observer.finish() }
        }
    }
}
