/// How long to wait after failures in a row: exponential growth up to a cap, then jitter. The one
/// backoff value of Courier — ``RetryPolicy``, the offline queue (`MutationQueue.Configuration`),
/// and the reconnect policies of Server-Sent Events feeds and the WebSocket client all carry one.
///
/// The delay after failure `n` in a row (1 = the first), before jitter:
/// ```
/// backoff = min(maximumDelay, initialDelay × multiplier^(n−1))
/// ```
/// then ``jitter`` spreads the clients that failed together ("Exponential Backoff And Jitter",
/// AWS Architecture Blog, 2015). A server's `Retry-After` (RFC 9110 §10.2.3) is applied by the
/// user of the backoff, never earlier than the server asked.
///
/// ```swift
/// let backoff = Backoff(initialDelay: .milliseconds(500), maximumDelay: .seconds(30), jitter: .equal)
/// let delay = backoff.delay(afterFailures: 3, random: 1)   // 2 s: 0.5 s × 2², the top of equal jitter's range
/// ```
public struct Backoff: Sendable, Hashable {
    /// How a delay is randomised, so that many clients failing at once do not retry in lockstep.
    public enum Jitter: Sendable, Hashable {
        /// No randomness: exactly the backoff.
        case none
        /// "Full jitter": uniform in `0...backoff`.
        case full
        /// "Equal jitter": `backoff/2` plus uniform in `0...backoff/2`.
        case equal
        /// The backoff plus uniform in `0...fraction × backoff` (`fraction` in `0...1`): never
        /// earlier than the backoff, for delays a server set (a Server-Sent Events `retry`).
        case additive(Double)
    }

    /// The delay after the first failure, before jitter (≥ 0).
    public var initialDelay: Duration
    /// Growth per further failure in a row (≥ 1; 2 doubles).
    public var multiplier: Double
    /// The cap on the delay before jitter (≥ 0). ``Jitter/additive(_:)`` may add to it.
    public var maximumDelay: Duration
    /// How the delay is randomised.
    public var jitter: Jitter

    /// Creates a backoff. Negative durations count as zero; a multiplier below 1 (or not finite)
    /// as 1; an additive fraction is clamped to `0...1`.
    public init(initialDelay: Duration, multiplier: Double = 2, maximumDelay: Duration, jitter: Jitter) {
        self.initialDelay = max(.zero, initialDelay)
        self.multiplier = multiplier.isFinite ? max(1, multiplier) : 1
        self.maximumDelay = max(.zero, maximumDelay)
        if case .additive(let fraction) = jitter {
            self.jitter = .additive(fraction.isFinite ? min(1, max(0, fraction)) : 0)
        } else {
            self.jitter = jitter
        }
    }

    /// The delay after `failures` failures in a row (1 = the first; lower counts as 1), before
    /// jitter: in `0...maximumDelay`, however large `failures` is.
    public func backoff(afterFailures failures: Int) -> Duration {
        let cap = max(.zero, maximumDelay)
        var delay = max(.zero, initialDelay)
        guard delay < cap else { return cap }
        // Step by step, and only while the next step stays below the cap: never overflows.
        for _ in 1..<min(max(1, failures), 128) {
            if Self.seconds(delay) * multiplier >= Self.seconds(cap) { return cap }
            delay = multiplier == 2 ? delay * 2 : delay * multiplier
        }
        return delay
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// The delay after `failures` failures in a row, with ``jitter`` applied.
    ///
    /// - Parameters:
    ///   - failures: Failures in a row, this one included (1 = the first).
    ///   - random: A uniform random number in `0...1` (clamped; not finite counts as 0), injected
    ///     so that tests are exact.
    /// - Returns: Never negative; at most ``maximumDelay`` except with ``Jitter/additive(_:)``,
    ///   which adds up to its fraction of the backoff.
    public func delay(afterFailures failures: Int, random: Double) -> Duration {
        let backoff = backoff(afterFailures: failures)
        let unit = random.isFinite ? min(1, max(0, random)) : 0
        switch jitter {
        case .none:
            return backoff
        case .full:
            return min(backoff, backoff * unit)  // min: Double rounding of a huge delay
        case .equal:
            let half = backoff / 2
            return min(backoff, half + half * unit)
        case .additive(let fraction):
            return backoff + backoff * (fraction * unit)
        }
    }
}
