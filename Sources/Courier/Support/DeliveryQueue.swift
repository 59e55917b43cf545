/// A first-in, first-out queue from one producer to one consumer (an `AsyncStream` the app
/// iterates), with back-pressure: each element has a weight (its payload bytes), and the producer
/// waits in ``waitForRoom()`` while the weight not yet taken by the consumer is above the limit.
///
/// ``push(_:weight:)`` never drops and never waits, so an element larger than the limit still goes
/// through (alone). Memory is bounded by the producer: a reader that calls `waitForRoom()` before
/// reading more from its socket lets TCP's window slow the peer down instead of buffering what the
/// app has not taken yet.
///
/// The consumer's side ends when its task is cancelled or its stream is released (the queue is
/// then *terminated*: buffered elements are dropped, `push` returns `false` and a waiting producer
/// goes on). The producer's side ends with ``finish()``: the consumer gets what is buffered, then
/// the end. Shared by the WebSocket client's connection events and the fan-out to its subscribers
/// (``Broadcast``).
package final class DeliveryQueue<Element: Sendable>: Sendable {
    private struct State: Sendable {
        var elements: [(element: Element, weight: Int)] = []
        /// Index of the next element to deliver in `elements` (elements before it were taken).
        var head = 0
        /// Weight of the elements buffered and not yet taken.
        var weight = 0
        var finished = false
        var terminated = false
        /// Producer waits return at once (``stopHoldingBack()``), until ``holdBack()``.
        var holdsBack = true
        var consumers: [CheckedContinuation<Element?, Never>] = []
        var producers: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextProducer = 0

        /// Whether a producer should wait: more than `limit` buffered while both sides run.
        func holdsBack(above limit: Int) -> Bool { holdsBack && !finished && !terminated && weight > limit }

        mutating func takeProducers() -> [CheckedContinuation<Void, Never>] {
            defer { producers = [:] }
            return Array(producers.values)
        }
    }

    /// Most weight buffered before ``waitForRoom()`` waits; nil never waits.
    package let limit: Int?
    private let state = Locked(State())
    private let onTermination: (@Sendable () -> Void)?

    /// - Parameters:
    ///   - limit: the weight (bytes) past which ``waitForRoom()`` waits; nil: unbounded.
    ///   - onTermination: called once when the consumer's side ends (cancelled or released).
    package init(limit: Int?, onTermination: (@Sendable () -> Void)? = nil) {
        self.limit = limit.map { max(0, $0) }
        self.onTermination = onTermination
    }

    /// Whether the weight buffered is above the limit (the producer should wait).
    package var isOverLimit: Bool {
        guard let limit else { return false }
        return state.withLock { $0.holdsBack(above: limit) }
    }

    /// The weight buffered and not yet taken.
    package var bufferedWeight: Int { state.withLock { $0.weight } }

    /// Whether the consumer's side ended (cancelled or released): nothing pushed is delivered.
    package var isTerminated: Bool { state.withLock { $0.terminated } }

    /// Appends `element`, or hands it to a waiting consumer. Returns `false` (dropping it) once the
    /// consumer is gone or after ``finish()``.
    @discardableResult
    package func push(_ element: Element, weight: Int) -> Bool {
        let consumer: CheckedContinuation<Element?, Never>?
        let accepted: Bool
        (consumer, accepted) = state.withLock { state in
            guard !state.finished, !state.terminated else { return (nil, false) }
            if !state.consumers.isEmpty { return (state.consumers.removeFirst(), true) }
            state.elements.append((element, max(0, weight)))
            state.weight += max(0, weight)
            return (nil, true)
        }
        consumer?.resume(returning: element)
        return accepted
    }

    /// Ends the producer's side: the consumer gets what is buffered, then `nil`.
    package func finish() {
        let (consumers, producers): ([CheckedContinuation<Element?, Never>], [CheckedContinuation<Void, Never>]) =
            state.withLock { state in
                state.finished = true
                guard state.head == state.elements.count else { return ([], state.takeProducers()) }
                defer { state.consumers = [] }
                return (state.consumers, state.takeProducers())
            }
        for consumer in consumers { consumer.resume(returning: nil) }
        for producer in producers { producer.resume() }
    }

    /// Ends the consumer's side: buffered elements are dropped, a waiting `next()` and producer go on.
    package func terminate() {
        let ended: (consumers: [CheckedContinuation<Element?, Never>], producers: [CheckedContinuation<Void, Never>])? =
            state.withLock { state in
                guard !state.terminated else { return nil }
                state.terminated = true
                state.elements = []
                state.head = 0
                state.weight = 0
                defer { state.consumers = [] }
                return (state.consumers, state.takeProducers())
            }
        guard let ended else { return }
        for consumer in ended.consumers { consumer.resume(returning: nil) }
        for producer in ended.producers { producer.resume() }
        onTermination?()
    }

    /// Makes ``waitForRoom()`` return at once (and wakes a producer waiting in it) until
    /// ``holdBack()``: for a producer that must drain what is left without waiting for the app.
    package func stopHoldingBack() {
        let producers = state.withLock { state in
            state.holdsBack = false
            return state.takeProducers()
        }
        for producer in producers { producer.resume() }
    }

    /// Undoes ``stopHoldingBack()``.
    package func holdBack() { state.withLock { $0.holdsBack = true } }

    /// Returns once the weight buffered is at most the limit, the queue ended, holding back
    /// stopped, or the calling task is cancelled.
    package func waitForRoom() async {
        guard let limit else { return }
        let id = state.withLock { state -> Int in
            defer { state.nextProducer += 1 }
            return state.nextProducer
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waits = state.withLock { state -> Bool in
                    guard state.holdsBack(above: limit), !Task.isCancelled else { return false }
                    state.producers[id] = continuation
                    return true
                }
                if !waits { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.producers.removeValue(forKey: id) }?.resume()
        }
    }

    /// The next element; `nil` after ``finish()`` once the buffer is empty, or once the consumer's
    /// side ended. Cancelling the calling task ends the consumer's side.
    package func next() async -> Element? {
        let taken: (element: Element?, producers: [CheckedContinuation<Void, Never>])? = state.withLock { state in
            guard !state.terminated else { return (nil, []) }
            guard state.head < state.elements.count else { return state.finished ? (nil, []) : nil }
            return take(&state)
        }
        if let taken {
            for producer in taken.producers { producer.resume() }
            return taken.element
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Element?, Never>) in
                let ready: (element: Element?, producers: [CheckedContinuation<Void, Never>])? = state.withLock { state in
                    if state.terminated { return (nil, []) }
                    if state.head < state.elements.count { return take(&state) }
                    if state.finished { return (nil, []) }
                    state.consumers.append(continuation)
                    return nil
                }
                if let ready {
                    for producer in ready.producers { producer.resume() }
                    continuation.resume(returning: ready.element)
                }
            }
        } onCancel: {
            terminate()
        }
    }

    /// Takes the first buffered element; returns it with the producers to wake once the weight
    /// fell to the limit.
    private func take(_ state: inout State) -> (element: Element?, producers: [CheckedContinuation<Void, Never>]) {
        let (element, weight) = state.elements[state.head]
        state.head += 1
        state.weight -= weight
        if state.head == state.elements.count {
            state.elements.removeAll(keepingCapacity: state.elements.count <= 1024)
            state.head = 0
        } else if state.head >= 1024, state.head * 2 >= state.elements.count {
            state.elements.removeFirst(state.head)
            state.head = 0
        }
        let room = limit.map { state.weight <= $0 } ?? true
        return (element, room ? state.takeProducers() : [])
    }

    /// A stream over this queue for the consumer: it ends the consumer's side when its task is
    /// cancelled or when the stream (every copy and iterator of it) is released.
    package func makeStream() -> AsyncStream<Element> {
        let consumer = Consumer(self)
        return AsyncStream(unfolding: { await consumer.queue.next() }, onCancel: { consumer.queue.terminate() })
    }

    /// Held by the stream's closure only: released with the stream, it ends the consumer's side.
    private final class Consumer: Sendable {
        let queue: DeliveryQueue<Element>
        init(_ queue: DeliveryQueue<Element>) { self.queue = queue }
        deinit { queue.terminate() }
    }
}
