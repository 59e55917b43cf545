import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The bounded hand-over between a transport that produces a response body and the one consumer
/// that iterates it (``MessageBody``).
///
/// The producer calls ``append(_:)`` from any thread and never blocks. Memory is bounded by
/// `limit` bytes held in the buffer:
///
/// - A transport that can pause its transfer (URLSession on Apple platforms, libcurl) passes
///   `pausesProducer: true`: at the limit ``append(_:)`` still takes the chunk but answers
///   ``Demand/pause``; the producer stops delivering and waits for the closure given to
///   ``setOnResume(_:)``, called once the consumer has drained the buffer to half the limit.
/// - A transport that cannot pause (URLSession on Linux: suspending a task re-sends a GET)
///   passes `false`: crossing the limit fails the consumer with
///   ``NetworkError/streamBufferOverflow(limit:)`` and cancels the transfer — a clear error
///   instead of unbounded growth. With `keepsBufferedOnOverflow` the bytes already received (at
///   most `limit` plus the chunk that crossed it) are still handed out first, then the failure.
///
/// `onCancel` runs once when the consumer goes away first: its task was cancelled, it dropped the
/// iterator, or the buffer overflowed. The producer must then stop the transfer at once.
///
/// Instead of iterating, a consumer can hand the buffer a synchronous sink
/// (``deliver(to:admittingProducerThread:)``): where the producer allows it (`deliversToSinks`),
/// every later chunk goes to the sink on the producer's own thread, so nothing waits in the buffer
/// and the producer never pauses.
package final class StreamBuffer: Sendable {
    /// Takes one chunk synchronously (see ``deliver(to:admittingProducerThread:)``); what it throws
    /// ends the body.
    package typealias Sink = @Sendable (Data) throws -> Void

    /// What the producer should do after handing over a chunk.
    package enum Demand: Sendable, Equatable {
        /// Keep delivering.
        case more
        /// Stop delivering until the resume closure is called.
        case pause
    }

    /// The most bytes held before the producer must stop.
    package let limit: Int
    /// Whether the producer can pause (otherwise the limit is a hard failure).
    package let pausesProducer: Bool
    /// Whether ``deliver(to:admittingProducerThread:)`` may run its sink on the producer's thread.
    package let deliversToSinks: Bool
    /// Whether a chunk kept in the buffer is copied into storage of its own size first.
    package let compactsChunks: Bool
    /// Whether an overflow (a producer that cannot pause) still hands out the chunks received
    /// before it, then fails: a consumer that resumes from what it read (an event stream's
    /// `Last-Event-ID`) progresses by a whole buffer per connection instead of losing it.
    package let keepsBufferedOnOverflow: Bool
    private let onCancel: @Sendable () -> Void
    private let state = Locked(State())

    private struct State: Sendable {
        var chunks: [Data] = []
        var head = 0
        var buffered = 0
        var peakBuffered = 0
        var finished = false
        var failure: NetworkError?
        var cancelled = false
        var paused = false
        var waiter: CheckedContinuation<Data?, any Error>?
        var onResume: (@Sendable () -> Void)?
        /// Reads the time of an idle timer's clock; set by ``trackActivity(clock:)``.
        var activityClock: (@Sendable () -> Duration)?
        /// When bytes last arrived or a paused producer was resumed (on `activityClock`).
        var lastActivity: Duration = .zero
        /// The sink that takes every chunk on the producer's thread, once
        /// ``deliver(to:admittingProducerThread:)`` drained the buffered ones.
        var sink: Sink?
        /// Whether the sink may still run on the producer's thread (see ``deliver(to:admittingProducerThread:)``).
        var sinkAdmits: (@Sendable () -> Bool)?
        /// The producer is inside the sink: the end is reported only once it returned.
        var sinkRunning = false
        /// How the body ended, for the task waiting in ``deliver(to:admittingProducerThread:)``.
        var sinkOutcome: Result<Void, any Error>?
        /// Resumed with `true` when the body ended, `false` when the sink was taken off the
        /// producer's thread.
        var sinkWaiter: CheckedContinuation<Bool, any Error>?

        /// Drops the buffered chunks, which no consumer will read: the body failed or was stopped.
        mutating func dropChunks() {
            chunks = []
            head = 0
            buffered = 0
        }
    }

    /// What an idle timer needs to know: whether the body still runs, whether the producer is
    /// paused by a full buffer (a consumer's slowness is never silence), and when bytes last came.
    package struct Activity: Sendable {
        package var finished: Bool
        package var paused: Bool
        package var lastActivity: Duration
    }

    /// Creates an empty buffer.
    ///
    /// - Parameters:
    ///   - limit: Bytes held before the producer must stop (at least 1).
    ///   - pausesProducer: Whether the producer honours ``Demand/pause``.
    ///   - deliversToSinks: Whether ``deliver(to:admittingProducerThread:)`` may call its sink on
    ///     the thread that calls ``append(_:)`` (a URLSession delegate queue: yes; libcurl's one
    ///     loop thread for every transfer: no, a sink writing to a slow disk there would stall
    ///     them all).
    ///   - compactsChunks: Whether a chunk kept beyond `limit` (a producer held past its bound, the
    ///     buffer growing toward a hard bound) is first copied into storage of its own size:
    ///     FoundationNetworking's chunks keep far more memory than their bytes (measured on Linux:
    ///     a download buffering up to 16 MiB behind a slow disk peaked at 112–150 MiB RSS, 60 MiB
    ///     with the copies). Copying every waiting chunk cost more than it saved in a buffer that
    ///     stays small (1 GiB download: 84 MiB peak in 1 of 20 runs, 61 without).
    ///   - keepsBufferedOnOverflow: Whether an overflow hands out the chunks already received
    ///     before the failure (see ``keepsBufferedOnOverflow``); `false` drops them.
    ///   - onCancel: Stops the transfer; called at most once, never under the buffer's lock.
    package init(
        limit: Int, pausesProducer: Bool, deliversToSinks: Bool = false, compactsChunks: Bool = false,
        keepsBufferedOnOverflow: Bool = false, onCancel: @escaping @Sendable () -> Void
    ) {
        self.limit = max(1, limit)
        self.pausesProducer = pausesProducer
        self.deliversToSinks = deliversToSinks
        self.compactsChunks = compactsChunks
        self.keepsBufferedOnOverflow = keepsBufferedOnOverflow
        self.onCancel = onCancel
    }

    /// Sets the closure that lets a paused producer continue. Called from the consumer's task.
    package func setOnResume(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.onResume = body }
    }

    /// Whether a pausing producer was told to pause and not yet resumed.
    package var isPaused: Bool { state.withLock { $0.paused } }

    /// Whether a sink given to ``deliver(to:admittingProducerThread:)`` now takes the chunks on the
    /// producer's thread.
    package var hasSink: Bool { state.withLock { $0.sink != nil } }

    /// Bytes currently held.
    package var bufferedByteCount: Int { state.withLock { $0.buffered } }

    /// The most bytes held at once so far (at most `limit` plus the chunk that reached it, for a
    /// producer that pauses).
    package var peakBufferedByteCount: Int { state.withLock { $0.peakBuffered } }

    /// Starts recording, on `clock`, when bytes arrive and when a paused producer is resumed
    /// (for an idle timer); the time of the call counts as activity.
    package func trackActivity(clock: @escaping @Sendable () -> Duration) {
        let now = clock()
        state.withLock { state in
            state.activityClock = clock
            state.lastActivity = now
        }
    }

    /// The body's state for an idle timer (see ``trackActivity(clock:)``).
    package var activity: Activity {
        state.withLock { Activity(finished: $0.finished, paused: $0.paused, lastActivity: $0.lastActivity) }
    }

    /// Hands `chunk` to the consumer. Empty chunks are ignored; chunks after the end are dropped.
    ///
    /// - Returns: ``Demand/pause`` when a pausing producer must stop until resumed.
    @discardableResult
    package func append(_ chunk: Data) -> Demand {
        guard !chunk.isEmpty else { return .more }
        enum Action {
            case none
            case deliver(CheckedContinuation<Data?, any Error>)
            case overflow(CheckedContinuation<Data?, any Error>?)
            case overflowKeeping
            case sink(Sink)
        }
        var demand = Demand.more
        // The waiter of a sink that no longer admits the producer's thread: it takes over.
        var detached: CheckedContinuation<Bool, any Error>?
        let action: Action = state.withLock { state in
            guard !state.finished else { return .none }
            if let clock = state.activityClock { state.lastActivity = clock() }
            if let sink = state.sink {
                if state.sinkAdmits?() ?? true {
                    state.sinkRunning = true
                    return .sink(sink)
                }
                state.sink = nil
                state.sinkAdmits = nil
                detached = state.sinkWaiter
                state.sinkWaiter = nil
            }
            if let waiter = state.waiter, state.buffered == 0 {
                state.waiter = nil
                return .deliver(waiter)
            }
            // Only past the bound (a hold given up, the buffer growing to its hard bound): copies
            // of every chunk cost more than they save in a buffer that stays small.
            state.chunks.append(compactsChunks && state.buffered >= limit ? chunk.withUnsafeBytes { Data($0) } : chunk)
            state.buffered += chunk.count
            state.peakBuffered = max(state.peakBuffered, state.buffered)
            guard state.buffered >= limit else { return .none }
            if pausesProducer {
                state.paused = true
                demand = .pause
                return .none
            }
            state.finished = true
            state.cancelled = true
            state.failure = .streamBufferOverflow(limit: limit)
            if keepsBufferedOnOverflow {
                // The consumer reads what arrived (bounded: it is in memory already), then the failure.
                return .overflowKeeping
            }
            state.dropChunks()
            defer { state.waiter = nil }
            return .overflow(state.waiter)
        }
        detached?.resume(returning: false)
        switch action {
        case .none: break
        case .deliver(let waiter): waiter.resume(returning: chunk)
        case .overflow(let waiter):
            waiter?.resume(throwing: NetworkError.streamBufferOverflow(limit: limit))
            onCancel()
            return .pause
        case .overflowKeeping:
            onCancel()
            return .pause
        case .sink(let sink):
            let failure: (any Error)?
            do {
                try sink(chunk)
                failure = nil
            } catch {
                failure = error
            }
            var stops = false
            let ended: SinkEnd? = state.withLock { state in
                state.sinkRunning = false
                if let failure, !state.finished {
                    Self.end(&state, with: .failure(failure))
                    stops = true
                }
                return Self.takeSinkEnd(&state)
            }
            if stops { onCancel() }
            ended?.resume()
        }
        return demand
    }

    /// Hands every chunk to `sink` until the body ends, instead of iterating: first the chunks
    /// already buffered (on the calling thread), then — when the producer allows it
    /// (`deliversToSinks`) — every new chunk on the producer's thread as it arrives, so nothing
    /// waits in the buffer and the producer is never paused or held. Otherwise the sink is called
    /// on the calling thread for each chunk, as an iterating consumer would. The sink is never
    /// called twice at once, and never after this method returned.
    ///
    /// `admittingProducerThread` is asked before each chunk the producer would hand to the sink
    /// (under the buffer's lock: keep it a quick read): once it answers `false` (the sink's
    /// writes became slow, and on Linux the producer's thread is every URLSession's), chunks are
    /// buffered again and the calling thread takes them, paused or held like an iterating
    /// consumer's, until the buffer is empty and it answers `true` again.
    ///
    /// - Throws: What `sink` threw (the transfer is then cancelled); the transfer's failure as a
    ///   ``NetworkError``; ``NetworkError/cancelled`` when the calling task is cancelled (which
    ///   cancels the transfer).
    package func deliver(
        to sink: @escaping Sink, admittingProducerThread admits: @escaping @Sendable () -> Bool = { true }
    ) async throws {
        guard deliversToSinks else {
            while let chunk = try await next() { try feed(chunk, to: sink) }
            return
        }
        if Task.isCancelled {
            cancel()
            throw NetworkError.cancelled
        }
        enum Step {
            case chunks([Data])
            case ended(Result<Void, any Error>)
            case installed
            /// Wait for the next chunk on this thread: the sink does not admit the producer's.
            case pull
        }
        while true {
            var resume: (@Sendable () -> Void)?
            let step: Step = state.withLock { state in
                if state.head < state.chunks.count {
                    // Popped as an iterating consumer would: a paused producer is resumed on the way.
                    var chunks: [Data] = []
                    while state.head < state.chunks.count { chunks.append(Self.pop(&state, limit: limit, resume: &resume)) }
                    return .chunks(chunks)
                }
                if state.finished { return .ended(Self.outcome(of: state)) }
                guard admits() else { return .pull }
                state.sink = sink
                state.sinkAdmits = admits
                return .installed
            }
            resume?()
            switch step {
            case .chunks(let chunks):
                for chunk in chunks { try feed(chunk, to: sink) }
            case .ended(let outcome):
                return try outcome.get()
            case .pull:
                guard let chunk = try await next() else { return }
                try feed(chunk, to: sink)
            case .installed:
                let ended = try await withTaskCancellationHandler {
                    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Bool, any Error>) in
                        enum Registration {
                            case ended(SinkEnd)
                            case detached
                            case waiting
                        }
                        let registration: Registration = state.withLock { state in
                            state.sinkWaiter = continuation
                            if let end = Self.takeSinkEnd(&state) { return .ended(end) }
                            // Taken off the producer's thread before this waiter was in place.
                            guard state.sink == nil else { return .waiting }
                            state.sinkWaiter = nil
                            return .detached
                        }
                        switch registration {
                        case .ended(let end): end.resume()
                        case .detached: continuation.resume(returning: false)
                        case .waiting: break
                        }
                    }
                } onCancel: {
                    cancel()
                }
                if ended { return }
            }
        }
    }

    /// Calls `sink` on the calling thread; a throw ends the body and cancels the transfer.
    private func feed(_ chunk: Data, to sink: Sink) throws {
        do {
            try sink(chunk)
        } catch {
            let running = state.withLock { state -> Bool in
                guard !state.finished else { return false }
                Self.end(&state, with: .failure(error))
                return true
            }
            if running { onCancel() }
            throw error
        }
    }

    /// The waiter of ``deliver(to:admittingProducerThread:)`` and how the body ended, once both are
    /// known and the producer is out of the sink.
    private struct SinkEnd {
        let waiter: CheckedContinuation<Bool, any Error>
        let outcome: Result<Void, any Error>
        func resume() { waiter.resume(with: outcome.map { true }) }
    }

    private static func takeSinkEnd(_ state: inout State) -> SinkEnd? {
        guard !state.sinkRunning, let waiter = state.sinkWaiter, let outcome = state.sinkOutcome else { return nil }
        state.sinkWaiter = nil
        return SinkEnd(waiter: waiter, outcome: outcome)
    }

    /// Ends the body from the sink's side: `outcome` is what
    /// ``deliver(to:admittingProducerThread:)`` reports.
    private static func end(_ state: inout State, with outcome: Result<Void, any Error>) {
        state.finished = true
        state.cancelled = true
        state.dropChunks()
        state.sinkOutcome = outcome
    }

    /// How a finished body ended, for a consumer that reached its end.
    private static func outcome(of state: State) -> Result<Void, any Error> {
        if let failure = state.failure { return .failure(failure) }
        if state.cancelled { return .failure(NetworkError.cancelled) }
        return .success(())
    }

    /// Ends the body: normally when `error` is `nil`, else with `error` mapped to a
    /// ``NetworkError``. Later calls are ignored.
    package func finish(throwing error: (any Error)? = nil) {
        let (waiter, sinkEnd): (CheckedContinuation<Data?, any Error>?, SinkEnd?) = state.withLock { state in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            if let error { state.failure = NetworkError(error) }
            state.sinkOutcome = error.map { .failure(NetworkError($0)) } ?? .success(())
            let sinkEnd = Self.takeSinkEnd(&state)
            guard state.buffered == 0 else { return (nil, sinkEnd) }
            defer { state.waiter = nil }
            return (state.waiter, sinkEnd)
        }
        sinkEnd?.resume()
        guard let waiter else { return }
        if let error {
            waiter.resume(throwing: NetworkError(error))
        } else {
            waiter.resume(returning: nil)
        }
    }

    /// Ends the body with `error` from outside both sides (a total time limit): the consumer gets
    /// `error`, the producer is cancelled. Has no effect once the body ended.
    package func abort(with error: NetworkError) {
        let (wasRunning, waiter, sinkEnd): (Bool, CheckedContinuation<Data?, any Error>?, SinkEnd?) = state.withLock { state in
            guard !state.finished else { return (false, nil, nil) }
            Self.end(&state, with: .failure(error))
            state.failure = error
            defer { state.waiter = nil }
            return (true, state.waiter, Self.takeSinkEnd(&state))
        }
        waiter?.resume(throwing: error)
        sinkEnd?.resume()
        if wasRunning { onCancel() }
    }

    /// Stops the body from the consumer's side (cancelled task, dropped iterator); the producer is
    /// told through `onCancel`. Has no effect once the body ended.
    package func cancel() {
        let (wasRunning, waiter, sinkEnd): (Bool, CheckedContinuation<Data?, any Error>?, SinkEnd?) = state.withLock { state in
            let running = !state.finished
            state.finished = true
            // Buffered chunks dropped after a normal end: the consumer must not read the end of
            // the body as complete (a download would place a cut-short file).
            if running || (state.head < state.chunks.count && state.failure == nil) { state.cancelled = true }
            if running { state.sinkOutcome = .failure(NetworkError.cancelled) }
            state.dropChunks()
            defer { state.waiter = nil }
            return (running, state.waiter, Self.takeSinkEnd(&state))
        }
        waiter?.resume(throwing: NetworkError.cancelled)
        sinkEnd?.resume()
        if wasRunning { onCancel() }
    }

    /// The next chunk, `nil` at the end.
    ///
    /// - Throws: ``NetworkError``: the transfer's failure, ``NetworkError/cancelled`` when the
    ///   calling task is cancelled (which also cancels the transfer),
    ///   ``NetworkError/streamBufferOverflow(limit:)``.
    package func next() async throws -> Data? {
        // A consumer that never waits (the producer keeps the buffer full) must still stop when its
        // task is cancelled: the cancellation handler below runs only while it waits.
        if Task.isCancelled {
            cancel()
            throw NetworkError.cancelled
        }
        if let ready = try takeBuffered() { return ready.chunk }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                var resume: (@Sendable () -> Void)?
                let outcome: Result<Data?, NetworkError>? = state.withLock { state in
                    if state.head < state.chunks.count { return .success(Self.pop(&state, limit: limit, resume: &resume)) }
                    if state.finished {
                        if state.cancelled && state.failure == nil { return .failure(.cancelled) }
                        return state.failure.map { .failure($0) } ?? .success(nil)
                    }
                    state.waiter = continuation
                    return nil
                }
                resume?()
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            cancel()
        }
    }

    private struct Ready { let chunk: Data? }

    /// A chunk (or the end) available without waiting; `nil` when the consumer must wait.
    private func takeBuffered() throws -> Ready? {
        var resume: (@Sendable () -> Void)?
        let outcome: Result<Ready, NetworkError>? = state.withLock { state in
            if state.head < state.chunks.count {
                return .success(Ready(chunk: Self.pop(&state, limit: limit, resume: &resume)))
            }
            guard state.finished else { return nil }
            if state.cancelled && state.failure == nil { return .failure(.cancelled) }
            return state.failure.map { .failure($0) } ?? .success(Ready(chunk: nil))
        }
        resume?()
        return try outcome?.get()
    }

    /// Removes the oldest chunk; sets `resume` when a paused producer may continue.
    private static func pop(_ state: inout State, limit: Int, resume: inout (@Sendable () -> Void)?) -> Data {
        let chunk = state.chunks[state.head]
        state.head += 1
        state.buffered -= chunk.count
        if state.paused && state.buffered <= limit / 2 {
            state.paused = false
            resume = state.onResume
            // The silence of a paused transfer was the consumer's: the idle time starts again now.
            if let clock = state.activityClock { state.lastActivity = clock() }
        }
        if state.head == state.chunks.count {
            state.chunks.removeAll(keepingCapacity: true)
            state.head = 0
        } else if state.head >= 64 {
            state.chunks.removeFirst(state.head)
            state.head = 0
        }
        return chunk
    }
}
