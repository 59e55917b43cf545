import Foundation
import Courier

/// A `Clock` for tests whose time only moves when the test (or a sleeper, in
/// ``Mode/advancesOnSleep`` mode) says so, and which records every sleep it was asked for.
///
/// ```swift
/// let clock = TestClock()                                   // sleeps return at once
/// let client = APIClient(environment: env) { $0.interceptors = [RetryInterceptor(clock: clock)] }
/// _ = try await client.send(GetItem(id: 1))
/// #expect(clock.sleeps == [.seconds(1), .seconds(1)])       // the delays Retry-After asked for
///
/// let manual = TestClock(mode: .manual)                     // sleepers wait for advance(by:)
/// let task = Task { try await manual.sleep(for: .seconds(5)) }
/// try await manual.waitForSleepers(count: 1)
/// manual.advance(by: .seconds(5))                           // resumes the sleeper
/// ```
///
/// Every sleeper is resumed exactly once: by an advance that reaches its deadline, or with
/// `CancellationError` as soon as its task is cancelled. Thread-safe: state sits behind a lock.
public final class TestClock: Clock, Sendable {
    /// An instant of a ``TestClock``: the time elapsed since the clock's zero.
    public struct Instant: InstantProtocol, Sendable, Hashable, CustomStringConvertible {
        /// Time since the clock's zero.
        public var offset: Duration

        /// Creates an instant `offset` after the clock's zero.
        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        public var description: String { "TestClock.Instant(\(offset))" }
    }

    /// How sleeps behave.
    public enum Mode: Sendable, Hashable {
        /// A sleep records its duration, moves the clock to its deadline and returns at once:
        /// code under test runs at full speed while ``sleeps`` shows what it waited for.
        case advancesOnSleep
        /// A sleep records its duration and suspends until ``advance(by:)`` or ``advance(to:)``
        /// reaches its deadline, or its task is cancelled.
        case manual
    }

    private struct Sleeper: Sendable {
        /// The clock's instant when the sleep began.
        var start: Instant
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct Watcher: Sendable {
        /// What the watcher waits for: `count` sleepers, all of them or those with one deadline.
        struct Condition: Sendable {
            var count: Int
            /// Only sleepers with this deadline count; `nil`: every sleeper.
            var deadline: Instant?
            /// Only sleepers that began at this instant count; `nil`: whenever they began.
            var start: Instant?

            func isMet(by sleepers: [UUID: Sleeper]) -> Bool {
                guard let deadline else { return sleepers.count >= count }
                return sleepers.values.lazy.filter { $0.deadline == deadline && (start == nil || $0.start == start) }.count
                    >= count
            }
        }
        var condition: Condition
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State: Sendable {
        var now = Instant(offset: .zero)
        var sleeps: [Duration] = []
        var sleepers: [UUID: Sleeper] = [:]
        var watchers: [UUID: Watcher] = [:]
    }

    private let state = Locked(State())

    /// How sleeps behave; fixed at creation.
    public let mode: Mode

    /// Creates a clock at instant zero.
    public init(mode: Mode = .advancesOnSleep) {
        self.mode = mode
    }

    /// The current instant.
    public var now: Instant { state.withLock { $0.now } }

    /// The clock's resolution: exact.
    public var minimumResolution: Duration { .zero }

    /// Every duration a sleep asked for, in call order (`deadline - now` at the time of the call;
    /// zero or negative when the deadline had already passed).
    public var sleeps: [Duration] { state.withLock { $0.sleeps } }

    /// Number of sleepers currently suspended (``Mode/manual`` only; always 0 otherwise).
    public var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// Suspends until `deadline` (see ``Mode``).
    ///
    /// - Throws: `CancellationError` when the task is cancelled before or during the sleep.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        try Task.checkCancellation()
        switch mode {
        case .advancesOnSleep:
            state.withLock { state in
                state.sleeps.append(state.now.duration(to: deadline))
                if deadline > state.now { state.now = deadline }
            }
        case .manual:
            try await suspend(until: deadline)
        }
    }

    private func suspend(until deadline: Instant) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Action { case resume, cancel, wait }
                let (action, watchers): (Action, [CheckedContinuation<Void, any Error>]) = state.withLock { state in
                    state.sleeps.append(state.now.duration(to: deadline))
                    // The cancellation flag is set before cancellation handlers run, and the handler
                    // takes the same lock: either it already ran (then the flag is visible here) or
                    // it will find this sleeper registered.
                    if Task.isCancelled { return (.cancel, []) }
                    if deadline <= state.now { return (.resume, []) }
                    state.sleepers[id] = Sleeper(start: state.now, deadline: deadline, continuation: continuation)
                    return (.wait, Self.takeSatisfiedWatchers(&state))
                }
                switch action {
                case .resume: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
                for watcher in watchers { watcher.resume() }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward by `duration` and resumes every sleeper whose deadline is reached.
    ///
    /// The clock moves in one step: every sleeper it wakes sees ``now`` at the end of the advance,
    /// and a sleep that a woken task starts next is measured from there. A loop that sleeps 1 s
    /// three times therefore wakes once for `advance(by: .seconds(3))`; to run it through three
    /// ticks, advance one tick at a time, waiting for the next sleep in between:
    /// ```swift
    /// let clock = TestClock(mode: .manual)
    /// let ticking = Task { for _ in 1...3 { try await clock.sleep(for: .seconds(1)) } }
    /// for tick in 1...3 {
    ///     try await clock.waitForSleeper(until: TestClock.Instant(offset: .seconds(tick)))
    ///     clock.advance(by: .seconds(1))
    /// }
    /// try await ticking.value
    /// ```
    public func advance(by duration: Duration) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.now = state.now.advanced(by: max(.zero, duration))
            return Self.takeDueSleepers(&state)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Moves the clock to `instant` (never backwards) and resumes every sleeper whose deadline is
    /// reached.
    public func advance(to instant: Instant) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            if instant > state.now { state.now = instant }
            return Self.takeDueSleepers(&state)
        }
        for continuation in ready { continuation.resume() }
    }

    /// Waits until at least `count` sleepers are suspended (``Mode/manual``), so a test can
    /// advance the clock knowing the code under test is already waiting.
    ///
    /// Counts every sleeper, including ones the code under test keeps for other reasons (a
    /// client's deadline timer sleeps towards its next deadline even after the call ended): to
    /// wait for one particular sleep, use ``waitForSleeper(until:)``.
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled (use a test time limit).
    public func waitForSleepers(count: Int = 1) async throws {
        try await waitFor(Watcher.Condition(count: count, deadline: nil))
    }

    /// Waits until a sleeper is suspended whose deadline is exactly `deadline` (``Mode/manual``):
    /// for code that sleeps `for: delay`, that is `now.advanced(by: delay)` with the clock's
    /// `now` when the sleep began. Other sleepers (timers towards later deadlines) do not count,
    /// so a test that then advances by `delay` knows it wakes that sleep.
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled (use a test time limit).
    public func waitForSleeper(until deadline: Instant) async throws {
        try await waitFor(Watcher.Condition(count: 1, deadline: deadline))
    }

    /// Waits until a sleeper is suspended that began at the current instant and sleeps for
    /// exactly `duration` (``Mode/manual``): the sleep that code under test starts with
    /// `sleep(for: duration)` before the clock moves again.
    ///
    /// Stricter than ``waitForSleeper(until:)`` with `now.advanced(by: duration)`: a timer that
    /// began earlier and ends at the same instant (a client's deadline timer keeps sleeping
    /// towards the deadline of a call that already ended) does not count. A test that took such a
    /// timer for the sleep it waits for would advance before that sleep began; the sleep would then
    /// end `duration` later than the clock was moved to, and nothing would wake it.
    ///
    /// ```swift
    /// let clock = TestClock(mode: .manual)
    /// let retrying = Task { try await clock.sleep(for: .seconds(3)) }
    /// try await clock.waitForSleeper(for: .seconds(3))
    /// clock.advance(by: .seconds(3))
    /// try await retrying.value
    /// ```
    ///
    /// - Throws: `CancellationError` when the waiting task is cancelled (use a test time limit).
    public func waitForSleeper(for duration: Duration) async throws {
        try await waitFor(
            state.withLock { state in
                Watcher.Condition(count: 1, deadline: state.now.advanced(by: duration), start: state.now)
            })
    }

    private func waitFor(_ condition: Watcher.Condition) async throws {
        let id = UUID()
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready: Bool = state.withLock { state in
                    if Task.isCancelled || condition.isMet(by: state.sleepers) { return true }
                    state.watchers[id] = Watcher(condition: condition, continuation: continuation)
                    return false
                }
                if ready {
                    if Task.isCancelled { continuation.resume(throwing: CancellationError()) } else { continuation.resume() }
                }
            }
        } onCancel: {
            let watcher = state.withLock { $0.watchers.removeValue(forKey: id) }
            watcher?.continuation.resume(throwing: CancellationError())
        }
    }

    private static func takeDueSleepers(_ state: inout State) -> [CheckedContinuation<Void, any Error>] {
        let due = state.sleepers.filter { $0.value.deadline <= state.now }
        for id in due.keys { state.sleepers.removeValue(forKey: id) }
        return due.values.sorted { $0.deadline < $1.deadline }.map(\.continuation)
    }

    private static func takeSatisfiedWatchers(_ state: inout State) -> [CheckedContinuation<Void, any Error>] {
        let sleepers = state.sleepers
        let satisfied = state.watchers.filter { $0.value.condition.isMet(by: sleepers) }
        for id in satisfied.keys { state.watchers.removeValue(forKey: id) }
        return satisfied.values.map(\.continuation)
    }
}
