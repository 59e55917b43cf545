/// The state machine of one host's ``CircuitBreaker`` plus the host-wide `Retry-After` pause: a
/// pure value driven by the caller's clock (`now` is any monotonic offset) and random numbers,
/// shared by ``RetryInterceptor`` and the fleet simulation.
package struct CircuitBreakerState: Sendable, Hashable {
    /// Where the breaker is.
    package enum Phase: Sendable, Hashable {
        case closed
        case open(until: Duration)
        /// After the cool-down; `probing` while the probe is out.
        case halfOpen(probing: Bool)
    }

    /// Whether an attempt may be sent now.
    package enum Admission: Sendable, Hashable {
        /// Send it.
        case allowed
        /// Send it as the half-open probe; report its outcome with `isProbe: true`.
        case probe
        /// The breaker is open: fail fast; the value is the rest of the cool-down.
        case open(remaining: Duration)
        /// A server asked the whole host to wait (`Retry-After`): wait or fail fast.
        case paused(remaining: Duration)
    }

    /// What an attempt's outcome says about the host.
    package enum Outcome: Sendable, Hashable {
        /// The server answered (any status that is not a transient failure).
        case success
        /// A transient failure: 500/502/503/504, a time-out, a refused or lost connection.
        case failure
        /// Says nothing about the host: cancelled, the device offline, a local error.
        case neutral
    }

    package let breaker: CircuitBreaker
    package private(set) var phase: Phase = .closed
    package private(set) var failuresInRow = 0
    /// Openings in a row without a success in between: picks the cool-down.
    package private(set) var openings = 0
    package private(set) var pausedUntil: Duration?
    private var outcomes: SlidingWindowCounts

    package init(breaker: CircuitBreaker) {
        self.breaker = breaker
        outcomes = SlidingWindowCounts(window: breaker.window)
    }

    /// Whether a first attempt (or a retry, when `isRetry`) may be sent at `now`. A retry is
    /// only sent while the breaker is closed; it never becomes the probe.
    package mutating func admit(at now: Duration, isRetry: Bool = false) -> Admission {
        if let pausedUntil, pausedUntil > now { return .paused(remaining: pausedUntil - now) }
        switch phase {
        case .closed:
            return .allowed
        case .open(let until) where now < until:
            return .open(remaining: until - now)
        case .open, .halfOpen(probing: false):
            if isRetry { return .open(remaining: .zero) }
            phase = .halfOpen(probing: true)
            return .probe
        case .halfOpen(probing: true):
            return .open(remaining: .zero)
        }
    }

    /// Records an attempt's outcome at `now`; `random` (in `0...1`) jitters a new cool-down, and
    /// is asked for only then (a system random number is a system call on Linux).
    package mutating func record(
        _ outcome: Outcome, isProbe: Bool = false, at now: Duration, random: @autoclosure () -> Double
    ) {
        switch outcome {
        case .success:
            failuresInRow = 0
            outcomes.add(first: 1, at: now)
            if case .closed = phase { return }
            if isProbe || phase == .halfOpen(probing: false) {
                phase = .closed
                openings = 0
                outcomes.reset()
            }
        case .failure:
            failuresInRow += 1
            outcomes.add(second: 1, at: now)
            switch phase {
            case .closed:
                if failuresInRow >= breaker.consecutiveFailures || ratioExceeded(at: now) { open(at: now, random: random()) }
            case .halfOpen where isProbe:
                open(at: now, random: random())
            case .open, .halfOpen:
                break
            }
        case .neutral:
            if isProbe, phase == .halfOpen(probing: true) { phase = .halfOpen(probing: false) }
        }
    }

    /// A server's `Retry-After` for the whole host: no attempt before `until`.
    package mutating func pause(until: Duration) {
        pausedUntil = max(pausedUntil ?? until, until)
    }

    private func ratioExceeded(at now: Duration) -> Bool {
        let (successes, failures) = outcomes.totals(at: now)
        let total = successes + failures
        return total >= breaker.minimumCalls && Double(failures) >= breaker.failureRatio * Double(total)
    }

    private mutating func open(at now: Duration, random: Double) {
        openings += 1
        phase = .open(until: now + breaker.coolDown.delay(afterFailures: openings, random: random))
        failuresInRow = 0
    }
}
