import Foundation
import Testing
import Courier
import CourierTesting

extension RetryTests {
    /// `TestClock` (CourierTesting): recording, advancing, cancellation.
    @Suite struct TestClockTests {
        @Test func advancesOnSleepRecordsAndMovesTime() async throws {
            let clock = TestClock()
            try await clock.sleep(for: .seconds(2))
            try await clock.sleep(for: .milliseconds(300))
            #expect(clock.sleeps == [.seconds(2), .milliseconds(300)])
            #expect(clock.now == TestClock.Instant(offset: .milliseconds(2300)))
        }

        @Test func pastDeadlineRecordsANonPositiveSleepAndReturns() async throws {
            let clock = TestClock(mode: .manual)
            clock.advance(by: .seconds(5))
            try await clock.sleep(until: TestClock.Instant(offset: .seconds(3)), tolerance: nil)
            #expect(clock.sleeps == [.seconds(-2)])
            #expect(clock.sleeperCount == 0)
        }

        @Test func manualSleepersWakeWhenTheirDeadlineIsReached() async throws {
            let clock = TestClock(mode: .manual)
            let short = Task { try await clock.sleep(for: .seconds(1)) }
            let long = Task { try await clock.sleep(for: .seconds(10)) }
            try await clock.waitForSleepers(count: 2)
            clock.advance(by: .seconds(1))
            try await short.value
            #expect(clock.sleeperCount == 1)
            clock.advance(to: TestClock.Instant(offset: .seconds(10)))
            try await long.value
            #expect(clock.sleeperCount == 0)
            #expect(Set(clock.sleeps) == [.seconds(1), .seconds(10)])
        }

        @Test func cancellationResumesASleeperWithCancellationError() async throws {
            let clock = TestClock(mode: .manual)
            let sleeper = Task { try await clock.sleep(for: .seconds(60)) }
            try await clock.waitForSleepers(count: 1)
            sleeper.cancel()
            await #expect(throws: CancellationError.self) { try await sleeper.value }
            #expect(clock.sleeperCount == 0)
            clock.advance(by: .seconds(60))  // nothing left to resume, and nothing resumed twice
        }

        @Test func alreadyCancelledTaskDoesNotSleep() async throws {
            for mode in [TestClock.Mode.advancesOnSleep, .manual] {
                let clock = TestClock(mode: mode)
                let task = Task {
                    withUnsafeCurrentTask { $0?.cancel() }
                    try await clock.sleep(for: .seconds(1))
                }
                await #expect(throws: CancellationError.self) { try await task.value }
                #expect(clock.sleeps.isEmpty)
            }
        }

        /// `waitForSleeper(for:)` waits for the sleep that begins now, not a timer that began earlier
        /// and ends at the same instant (`waitForSleeper(until:)` takes either). Taking the timer for
        /// the sleep hung a Server-Sent Events test: it advanced before the reconnect's sleep began.
        @Test(.timeLimit(.minutes(1))) func aSleepOfADurationIsToldApartFromAnEarlierTimerEndingThen() async throws {
            let clock = TestClock(mode: .manual)
            let timer = Task { try await clock.sleep(until: TestClock.Instant(offset: .seconds(5))) }
            try await clock.waitForSleepers(count: 1)
            clock.advance(to: TestClock.Instant(offset: .seconds(2)))
            // The timer ends at 2 s + 3 s: the instant alone cannot tell it from a 3 s sleep begun now.
            try await clock.waitForSleeper(until: TestClock.Instant(offset: .seconds(5)))
            let found = Locked(false)
            let watcher = Task {
                try await clock.waitForSleeper(for: .seconds(3))
                found.withLock { $0 = true }
            }
            for _ in 0..<100 { await Task.yield() }
            try await Task.sleep(for: .milliseconds(20))
            #expect(!found.withLock { $0 }, "the earlier timer was taken for the sleep")
            let sleep = Task { try await clock.sleep(for: .seconds(3)) }
            try await watcher.value
            clock.advance(by: .seconds(3))
            try await sleep.value
            try await timer.value
            #expect(clock.sleeperCount == 0)
        }

        @Test func manySleepersCancelledConcurrentlyEachResumeOnce() async throws {
            let clock = TestClock(mode: .manual)
            let tasks = (0..<100).map { index in Task { try await clock.sleep(for: .seconds(Int64(index + 1))) } }
            try await clock.waitForSleepers(count: 100)
            for task in tasks.prefix(50) { task.cancel() }
            clock.advance(by: .seconds(1000))
            var cancelled = 0
            var woke = 0
            for task in tasks {
                switch await task.result {
                case .success: woke += 1
                case .failure(let error): if error is CancellationError { cancelled += 1 }
                }
            }
            #expect(cancelled + woke == 100)
            #expect(cancelled == 50)
            #expect(clock.sleeperCount == 0)
        }
    }
}
