import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RetryPolicy {
    /// The backoff before jitter: `baseDelay × 2^retry`, capped at ``maxDelay``
    /// (``Backoff/backoff(afterFailures:)``).
    ///
    /// - Parameter retry: Index of the retry about to happen, starting at 0 for the first retry;
    ///   negative values count as 0.
    /// - Returns: A delay in `0...maxDelay` (never more, however large `retry` is).
    package func backoff(forRetry retry: Int) -> Duration {
        backoff.backoff(afterFailures: Self.failures(beforeRetry: retry))
    }

    /// Failures in a row before retry `retry` (0-based): `retry + 1`, without overflowing.
    private static func failures(beforeRetry retry: Int) -> Int {
        retry < Int.max ? max(0, retry) + 1 : retry
    }

    /// The backoff for `retry` with ``jitter`` applied (``Backoff/delay(afterFailures:random:)``).
    ///
    /// - Parameters:
    ///   - retry: Index of the retry about to happen, starting at 0 for the first retry.
    ///   - random: A uniform random number in `0...1` (clamped); injected so tests are exact.
    package func jitteredBackoff(forRetry retry: Int, random: Double) -> Duration {
        backoff.delay(afterFailures: Self.failures(beforeRetry: retry), random: random)
    }

    /// The wait a `Retry-After` value asks for (RFC 9110 §10.2.3), exactly as the server asked.
    ///
    /// - Parameters:
    ///   - retryAfter: The parsed header (delta-seconds or an HTTP-date in any of the three
    ///     RFC 9110 §5.6.7 formats), or `nil` when the response had none or it did not parse.
    ///   - now: The current wall-clock time, for the HTTP-date form.
    /// - Returns: `nil` when there is no usable hint — no header, or a value of zero or a date not
    ///   in the future; callers then use the normal backoff rather than retrying in a tight loop.
    ///   Otherwise the server's wait, unbounded: compare it with ``maxRetryAfter`` to decide
    ///   whether to wait at all.
    package func retryAfterDelay(_ retryAfter: RetryAfter?, now: Date = Date()) -> Duration? {
        guard let retryAfter, let wait = retryAfter.delay(from: now), wait > .zero else { return nil }
        return wait
    }

    /// Delay before the next attempt, honouring `Retry-After` when the server sent one.
    ///
    /// - Parameters:
    ///   - retry: Index of the retry about to happen, starting at 0 for the first retry.
    ///   - retryAfter: The response's `Retry-After` value, already parsed (RFC 9110 §10.2.3).
    ///   - now: The current wall-clock time, for an HTTP-date `Retry-After`.
    ///   - random: A uniform random number in `0...1` for the jitter; random by default.
    /// - Returns: `retryAfterDelay(_:now:)` when it gives a usable wait (possibly longer than
    ///   ``maxRetryAfter``: the caller decides whether to wait that long), else
    ///   `jitteredBackoff(forRetry:random:)`. Never negative.
    public func delay(
        forRetry retry: Int,
        retryAfter: RetryAfter?,
        now: Date = Date(),
        random: Double = Double.random(in: 0...1)
    ) -> Duration {
        retryAfterDelay(retryAfter, now: now) ?? jitteredBackoff(forRetry: retry, random: random)
    }
}
