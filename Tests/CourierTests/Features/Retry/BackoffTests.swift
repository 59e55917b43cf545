import Foundation
import Testing
import Courier

extension RetryTests {
    /// `Backoff`, the one backoff value of retries, the offline queue and both reconnect policies.
    @Suite struct BackoffTests {
        @Test(arguments: [
            (1, Duration.milliseconds(300)), (2, .milliseconds(900)), (3, .milliseconds(2700)), (4, .seconds(5)),
            (5, .seconds(5)), (Int.max, .seconds(5)), (0, .milliseconds(300)), (-7, .milliseconds(300)),
        ])
        func growsByTheMultiplierUpToTheCap(failures: Int, expected: Duration) {
            let backoff = Backoff(initialDelay: .milliseconds(300), multiplier: 3, maximumDelay: .seconds(5), jitter: .none)
            #expect(backoff.backoff(afterFailures: failures) == expected)
            #expect(backoff.delay(afterFailures: failures, random: 0.7) == expected)
        }

        @Test func aHugeCapNeverOverflows() {
            let backoff = Backoff(initialDelay: .seconds(1), maximumDelay: .seconds(Int64.max), jitter: .full)
            let delay = backoff.backoff(afterFailures: Int.max)
            #expect(delay > .seconds(1 << 60))
            #expect(delay <= .seconds(Int64.max))
            #expect(backoff.delay(afterFailures: Int.max, random: 1) <= .seconds(Int64.max))
        }

        @Test(arguments: [
            (Backoff.Jitter.none, 0.5, Duration.seconds(4)),
            (.full, 0.0, .zero), (.full, 0.25, .seconds(1)), (.full, 1.0, .seconds(4)),
            (.equal, 0.0, .seconds(2)), (.equal, 0.5, .seconds(3)), (.equal, 1.0, .seconds(4)),
            (.additive(0.5), 0.0, .seconds(4)), (.additive(0.5), 1.0, .seconds(6)), (.additive(3), 1.0, .seconds(8)),
            (.full, .nan, .zero), (.equal, -2, .seconds(2)), (.additive(0.25), 9, .seconds(5)),
        ])
        func jitterStaysInItsRange(jitter: Backoff.Jitter, random: Double, expected: Duration) {
            // Third failure: 1 s × 2² = 4 s before jitter. An additive fraction above 1 counts as 1.
            let backoff = Backoff(initialDelay: .seconds(1), maximumDelay: .seconds(30), jitter: jitter)
            #expect(backoff.delay(afterFailures: 3, random: random) == expected)
        }

        @Test func badValuesAreClamped() {
            let backoff = Backoff(
                initialDelay: .seconds(-1), multiplier: .nan, maximumDelay: .seconds(-5), jitter: .additive(.infinity))
            #expect(backoff.initialDelay == .zero)
            #expect(backoff.multiplier == 1)
            #expect(backoff.maximumDelay == .zero)
            #expect(backoff.jitter == .additive(0))
            #expect(backoff.delay(afterFailures: 10, random: 1) == .zero)
        }

        @Test func everyPolicyCarriesOne() {
            let retry = RetryPolicy(baseDelay: .milliseconds(500), maxDelay: .seconds(8), jitter: .equal)
            #expect(retry.backoff == Backoff(initialDelay: .milliseconds(500), maximumDelay: .seconds(8), jitter: .equal))
        }
    }
}
