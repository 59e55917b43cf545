/// A limit on retries across all calls of a client to one host: a retry is sent only while the
/// budget has balance, so that during an outage the client adds at most a fixed share of retries
/// to the load it already puts on the backend — instead of multiplying it by `1 + maxRetries`.
///
/// The balance over the last ``window`` (per host, per client):
/// ```
/// allowed retries = retryRatio × first attempts + minimumRetriesPerSecond × window
/// ```
/// Each first attempt deposits, each retry withdraws (when it is planned; one that is then never
/// sent, its call cancelled during the wait, is given back), and both expire after ``window``.
/// The model is Finagle's `RetryBudget` (a share of recent requests plus a per-second floor,
/// deposits that expire), close to gRPC's retry throttling and the AWS SDKs' retry quota. The
/// floor lets a client that sends little still retry a lone glitch; the ratio bounds the
/// amplification of a busy one at `1 + retryRatio`.
///
/// A retry the budget refuses ends the call with its last response or error, and
/// ``RequestContext/retryRefusal`` says ``RetryRefusal/budgetExhausted``. An endpoint's own
/// ``RetryPolicy/maxRetries`` still applies inside the budget.
///
/// ```swift
/// let retry = RetryInterceptor(budget: RetryBudget(retryRatio: 0.1))   // a stricter budget
/// let unlimited = RetryInterceptor(budget: nil)                          // no budget at all
/// ```
public struct RetryBudget: Sendable, Hashable {
    /// Retries allowed per first attempt in the window (`0...1`; 0.2 = one retry per five calls).
    public var retryRatio: Double
    /// Retries allowed per second of the window whatever the traffic (≥ 0): the floor.
    public var minimumRetriesPerSecond: Double
    /// How long a deposit (a first attempt) or a withdrawal (a retry) counts (> 0).
    public var window: Duration

    /// Creates a budget. A ratio is clamped to `0...1`, a negative floor counts as 0, a window
    /// below 1 ms as 1 ms; values that are not finite count as 0.
    ///
    /// - Parameters:
    ///   - retryRatio: Retries per first attempt; 0.2 by default (Finagle's default).
    ///   - minimumRetriesPerSecond: The floor; 0.2 by default — two retries per 10 s window, so a
    ///     lone call keeps the default policy's two retries (a phone is one client of many:
    ///     Finagle's server-side floor of 10 per second would let every device retry everything).
    ///   - window: How long deposits count; 10 s by default.
    public init(retryRatio: Double = 0.2, minimumRetriesPerSecond: Double = 0.2, window: Duration = .seconds(10)) {
        self.retryRatio = retryRatio.isFinite ? min(1, max(0, retryRatio)) : 0
        self.minimumRetriesPerSecond = minimumRetriesPerSecond.isFinite ? max(0, minimumRetriesPerSecond) : 0
        self.window = max(.milliseconds(1), window)
    }

    /// The defaults: 20 % of first attempts plus 0.2 retries per second, over 10 s.
    public static let standard = RetryBudget()
}

/// The state of one ``RetryBudget``: first attempts deposit, retries withdraw, both expire after
/// the window. A pure value driven by the caller's clock (`now` is any monotonic offset), shared
/// by ``RetryInterceptor`` and the fleet simulation.
package struct RetryBudgetLedger: Sendable, Hashable {
    package let budget: RetryBudget
    private var counts: SlidingWindowCounts

    package init(budget: RetryBudget) {
        self.budget = budget
        counts = SlidingWindowCounts(window: budget.window)
    }

    /// Records a first attempt at `now`.
    package mutating func deposit(at now: Duration) {
        counts.add(first: 1, at: now)
    }

    /// Whether a retry at `now` fits the budget; when it does, it is withdrawn.
    package mutating func withdraw(at now: Duration) -> Bool {
        guard balance(at: now) >= 1 else { return false }
        counts.add(second: 1, at: now)
        return true
    }

    /// Gives back a retry withdrawn at `time` that was never sent (its call was cancelled, or
    /// ended, before it went out).
    package mutating func refund(withdrawnAt time: Duration) {
        counts.subtract(second: 1, countedAt: time)
    }

    /// Retries still allowed at `now` (fractional; a retry needs at least 1).
    package func balance(at now: Duration) -> Double {
        let (deposits, withdrawals) = counts.totals(at: now)
        let floor = budget.minimumRetriesPerSecond * SlidingWindowCounts.seconds(budget.window)
        return budget.retryRatio * Double(deposits) + floor - Double(withdrawals)
    }
}
