import Foundation
import Testing
import CourierTesting
@testable import Courier

/// Courier's own idle timer (`IdleTimer`, `StreamingOptions.idleTimeout`) on a manual clock:
/// exact to the clock, restarted by every chunk, and blind to time spent paused.
@Suite struct IdleTimerTests {
    /// A body fed through a pausing buffer of `limit` bytes, watched for `idle` on `clock`.
    private static func watchedBody(
        idle: Duration, limit: Int = 1 << 20, clock: TestClock
    ) -> (StreamBuffer, MessageBody, any DeadlineScheduling) {
        let buffer = StreamBuffer(limit: limit, pausesProducer: true) {}
        let deadlines = makeDeadlineScheduler(clock: clock)
        let body = MessageBody(buffer: buffer, length: .unknown).idleLimited(to: idle, deadlines: deadlines)
        return (buffer, body, deadlines)
    }

    /// Advances `clock` by `step` once a sleeper for the new instant's timer is registered.
    private static func advance(_ clock: TestClock, by step: Duration) async throws {
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: step)
        await Task.yield()
    }

    /// Whether the body ended within 10 s of real time (the timer fires in its own task).
    private static func endsSoon(_ buffer: StreamBuffer) async throws -> Bool {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: .seconds(10))
        while !buffer.activity.finished, clock.now < end { try await Task.sleep(for: .milliseconds(1)) }
        return buffer.activity.finished
    }

    @Test(arguments: [
        (Duration.seconds(Int64.max), Duration.seconds(366 * 24 * 3600 + 1)), (.seconds(-5), .seconds(2)),
        (.milliseconds(1500), .seconds(3)), (.zero, .seconds(2)),
    ])
    func theTransportsBackstopIsWholeSecondsAboveTheTimeoutAndBounded(idle: Duration, backstop: Duration) {
        #expect(IdleTimer.backstop(for: idle) == backstop)
    }

    @Test func silenceOfExactlyTheTimeoutFailsTheBody() async throws {
        let clock = TestClock(mode: .manual)
        let (buffer, body, deadlines) = Self.watchedBody(idle: .milliseconds(1500), clock: clock)
        _ = deadlines
        buffer.append(Data("a".utf8))
        try await Self.advance(clock, by: .milliseconds(1000))
        buffer.append(Data("b".utf8))  // restarts the timer at 1.0 s
        try await Self.advance(clock, by: .milliseconds(1400))
        #expect(!buffer.activity.finished, "2.4 s: only 1.4 s of silence")
        try await Self.advance(clock, by: .milliseconds(100))
        #expect(try await Self.endsSoon(buffer), "2.5 s: 1.5 s of silence")
        var iterator = body.makeAsyncIterator()
        await #expect(throws: NetworkError.self) {
            while try await iterator.next() != nil {}
        }
    }

    @Test func timeSpentPausedForTheConsumerNeverCounts() async throws {
        let clock = TestClock(mode: .manual)
        let (buffer, body, deadlines) = Self.watchedBody(idle: .seconds(1), limit: 4, clock: clock)
        _ = deadlines
        #expect(buffer.append(Data("full".utf8)) == .pause)
        for _ in 0..<5 { try await Self.advance(clock, by: .seconds(1)) }
        #expect(!buffer.activity.finished, "5 s paused is the consumer's time")
        var iterator = body.makeAsyncIterator()
        #expect(try await iterator.next() == Data("full".utf8))  // resumes: the idle time restarts
        try await Self.advance(clock, by: .milliseconds(900))
        #expect(!buffer.activity.finished)
        try await Self.advance(clock, by: .milliseconds(100))
        #expect(try await Self.endsSoon(buffer))
    }
}
