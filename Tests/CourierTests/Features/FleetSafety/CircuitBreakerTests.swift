import Testing
import Courier

/// The breaker's state machine: opening, cool-down with jitter, the half-open probe, the pause.
@Suite struct CircuitBreakerTests {
    static let breaker = CircuitBreaker(
        consecutiveFailures: 3, failureRatio: 0.5, minimumCalls: 10, window: .seconds(10),
        coolDown: Backoff(initialDelay: .seconds(4), maximumDelay: .seconds(60), jitter: .equal))

    @Test func opensAfterARunOfFailuresAndFailsFastUntilTheCoolDownEnds() {
        var state = CircuitBreakerState(breaker: Self.breaker)
        for second in 0..<3 {
            do {
                let value = state.admit(at: .seconds(second))
                #expect(value == .allowed)
            }
            state.record(.failure, at: .seconds(second), random: 1)
        }
        // Opened at 2 s for 4 s (equal jitter, random 1 = the top of 2...4 s).
        #expect(state.phase == .open(until: .seconds(6)))
        do {
            let value = state.admit(at: .seconds(5))
            #expect(value == .open(remaining: .seconds(1)))
        }
        do {
            let value = state.admit(at: .seconds(6))
            #expect(value == .probe)
        }
        do {
            let value = state.admit(at: .seconds(6))
            #expect(value == .open(remaining: .zero))  // one probe at a time
        }
    }

    @Test func aSuccessBreaksTheRun() {
        var state = CircuitBreakerState(breaker: Self.breaker)
        state.record(.failure, at: .zero, random: 0)
        state.record(.failure, at: .zero, random: 0)
        state.record(.success, at: .zero, random: 0)
        state.record(.failure, at: .zero, random: 0)
        state.record(.neutral, at: .zero, random: 0)
        #expect(state.phase == .closed)
    }

    @Test func opensOnTheFailureRatioOverTheWindow() {
        var state = CircuitBreakerState(breaker: Self.breaker)
        for index in 0..<9 { state.record(index.isMultiple(of: 2) ? .success : .failure, at: .seconds(1), random: 0) }
        #expect(state.phase == .closed)  // 4 of 9: too few outcomes and below half
        state.record(.failure, at: .seconds(1), random: 0)  // 5 of 10
        #expect(state.phase == .open(until: .seconds(3)))
    }

    @Test func theProbesSuccessClosesItsFailureReopensForLonger() {
        var state = CircuitBreakerState(breaker: Self.breaker)
        for _ in 0..<3 { state.record(.failure, at: .zero, random: 1) }
        do {
            let value = state.admit(at: .seconds(4))
            #expect(value == .probe)
        }
        state.record(.failure, isProbe: true, at: .seconds(4), random: 1)
        #expect(state.phase == .open(until: .seconds(12)))  // second opening: 8 s
        do {
            let value = state.admit(at: .seconds(12))
            #expect(value == .probe)
        }
        state.record(.success, isProbe: true, at: .seconds(13), random: 1)
        #expect(state.phase == .closed)
        #expect(state.openings == 0)
        do {
            let value = state.admit(at: .seconds(13))
            #expect(value == .allowed)
        }
    }

    @Test func aProbeThatSaysNothingLetsTheNextCallProbe() {
        var state = CircuitBreakerState(breaker: Self.breaker)
        for _ in 0..<3 { state.record(.failure, at: .zero, random: 1) }
        do {
            let value = state.admit(at: .seconds(4))
            #expect(value == .probe)
        }
        state.record(.neutral, isProbe: true, at: .seconds(4), random: 1)
        do {
            let value = state.admit(at: .seconds(5))
            #expect(value == .probe)
        }
    }

    @Test func retriesNeverProbe() {
        var state = CircuitBreakerState(breaker: Self.breaker)
        for _ in 0..<3 { state.record(.failure, at: .zero, random: 1) }
        do {
            let value = state.admit(at: .seconds(9), isRetry: true)
            #expect(value == .open(remaining: .zero))
        }
        do {
            let value = state.admit(at: .seconds(9))
            #expect(value == .probe)
        }
    }

    @Test func aRetryAfterPausesTheHost() {
        var state = CircuitBreakerState(breaker: Self.breaker)
        state.pause(until: .seconds(30))
        state.pause(until: .seconds(10))  // never shortened
        do {
            let value = state.admit(at: .seconds(5))
            #expect(value == .paused(remaining: .seconds(25)))
        }
        do {
            let value = state.admit(at: .seconds(30))
            #expect(value == .allowed)
        }
    }
}
