import Foundation

/// Enforces the total deadlines of many calls with one sleeping task, instead of a timer (and a
/// task group) per call — measured at ~65 µs of CPU per call on Linux, more than everything else
/// the client does.
///
/// Each call registers its deadline and an expiry action; the scheduler sleeps until the earliest
/// registered deadline, runs the actions of every entry that has expired, and sleeps again until
/// the next one. A call that finishes first removes its entry. Registration is a lock and a
/// dictionary insert; the sleeper is only restarted when a new deadline is earlier than the one it
/// sleeps towards.
protocol DeadlineScheduling: AnyObject, Sendable {
    /// Registers `expire` to run once `timeout` from now has passed; returns a token for ``cancel(_:)``.
    func schedule(after timeout: Duration, expire: @escaping @Sendable () -> Void) -> UInt64
    /// Removes a registration; its action will not run.
    func cancel(_ token: UInt64)
    /// Time on the scheduler's clock since the scheduler was made: the instant ``schedule(after:expire:)``
    /// measures from, for timers that compare instants (the idle timeout of a streamed body).
    var elapsed: Duration { get }
}

/// Builds a scheduler on any `Duration`-based clock (opens the client's `any Clock<Duration>`).
func makeDeadlineScheduler<C: Clock>(clock: C) -> any DeadlineScheduling where C.Duration == Duration {
    DeadlineScheduler(clock: clock)
}

/// One registered deadline, kept as the time since the scheduler's origin, so the bookkeeping is
/// plain `Duration` arithmetic. Outside the generic class: nested in it, `[UInt64: Entry]` would
/// be a type generic over the clock, whose metadata the runtime looks up on every insert and
/// removal (measured: ~7 % of an in-memory call).
private struct DeadlineEntry {
    let deadline: Duration
    let expire: @Sendable () -> Void
}

/// The scheduler's registrations and sleeper (non-generic, like ``DeadlineEntry``).
private struct DeadlineSchedulerState: Sendable {
    var entries: [UInt64: DeadlineEntry] = [:]
    var nextToken: UInt64 = 0
    var wakeAt: Duration?
    var sleeper: Task<Void, Never>?
}

final class DeadlineScheduler<C: Clock>: DeadlineScheduling where C.Duration == Duration {
    private typealias Entry = DeadlineEntry
    private typealias State = DeadlineSchedulerState

    private let clock: C
    /// The instant every deadline is measured from.
    private let origin: C.Instant
    private let state = Locked(State())

    init(clock: C) {
        self.clock = clock
        origin = clock.now
    }

    deinit {
        state.withLock { $0.sleeper?.cancel() }
    }

    /// The longest wait scheduled, about 68 years: `clock.now` advanced by much more (a deadline of
    /// `.seconds(Int64.max)` meaning "none") makes `Clock.sleep(until:)` trap converting the
    /// instant; a clamped deadline never fires in practice.
    static var maxTimeout: Duration { .seconds(Int64(Int32.max)) }

    func schedule(after timeout: Duration, expire: @escaping @Sendable () -> Void) -> UInt64 {
        let deadline = origin.duration(to: clock.now) + min(max(.zero, timeout), Self.maxTimeout)
        return state.withLock { state in
            let token = state.nextToken
            state.nextToken &+= 1
            state.entries[token] = Entry(deadline: deadline, expire: expire)
            if state.wakeAt.map({ deadline < $0 }) ?? true {
                state.sleeper?.cancel()
                state.wakeAt = deadline
                state.sleeper = makeSleeper(until: deadline)
            }
            return token
        }
    }

    func cancel(_ token: UInt64) {
        state.withLock { _ = $0.entries.removeValue(forKey: token) }
    }

    var elapsed: Duration { origin.duration(to: clock.now) }

    private func makeSleeper(until deadline: Duration) -> Task<Void, Never> {
        let clock = self.clock
        let deadline = origin.advanced(by: deadline)
        // High priority: a deadline or an idle timeout must fire on time while the pool is busy
        // with the app's default-priority work (on Linux each priority has its own threads; on
        // Apple platforms the pool runs higher priorities first). Its work is a few instructions.
        return Task(priority: .high) { [weak self] in
            do {
                try await clock.sleep(until: deadline, tolerance: nil)
            } catch {
                return  // replaced by an earlier deadline, or the scheduler is gone
            }
            self?.fireExpired()
        }
    }

    private func fireExpired() {
        let now = origin.duration(to: clock.now)
        let expired: [@Sendable () -> Void] = state.withLock { state in
            var due: [@Sendable () -> Void] = []
            for (token, entry) in state.entries where entry.deadline <= now {
                due.append(entry.expire)
                state.entries[token] = nil
            }
            if let next = state.entries.values.map(\.deadline).min() {
                state.wakeAt = next
                state.sleeper = makeSleeper(until: next)
            } else {
                state.wakeAt = nil
                state.sleeper = nil
            }
            return due
        }
        for action in expired { action() }
    }
}

/// One call's total deadline (``EndpointPolicy/deadline``) on a ``DeadlineScheduling``, postponed
/// by request body progress: it expires once `timeout` has passed since the later of its start and
/// the last request body bytes sent (``RequestContext/noteBodyProgress()``).
///
/// Progress does not touch the scheduler: each report is one store in the call's context. When the
/// registered deadline comes, the timer looks at the last progress and, if the body moved since,
/// registers again for what is left — a re-arm per `timeout` at most, as the idle timer of a
/// streamed body does (``IdleTimer``).
final class CallDeadline: Sendable {
    private struct State: Sendable {
        var token: UInt64?
        var isCancelled = false
    }

    private let timeout: Duration
    private let context: RequestContext
    private let deadlines: any DeadlineScheduling
    private let expire: @Sendable () -> Void
    private let state = Locked(State())

    /// Starts the deadline: `expire` runs once, when `timeout` has passed with no body progress.
    init(
        timeout: Duration, context: RequestContext, deadlines: any DeadlineScheduling,
        expire: @escaping @Sendable () -> Void
    ) {
        self.timeout = timeout
        self.context = context
        self.deadlines = deadlines
        self.expire = expire
        arm(after: timeout)
    }

    /// Stops the deadline; `expire` will not run (unless it is already running).
    func cancel() {
        let token = state.withLock { state in
            state.isCancelled = true
            defer { state.token = nil }
            return state.token
        }
        if let token { deadlines.cancel(token) }
    }

    private func arm(after delay: Duration) {
        // Registered under the lock, so a concurrent `cancel()` either sees the token or stops
        // the registration: none outlives the call. (Lock order: this lock, then the scheduler's.)
        state.withLock { state in
            guard !state.isCancelled else { return }
            state.token = deadlines.schedule(after: delay) { [self] in fire() }
        }
    }

    private func fire() {
        if let since = context.timeSinceBodyProgress, since < timeout {
            arm(after: timeout - since)  // the body moved: the deadline counts from its last bytes
            return
        }
        let live = state.withLock { state in
            state.token = nil
            return !state.isCancelled
        }
        if live { expire() }
    }
}
