import Courier

extension ServerSentEvents {
    /// When a feed reconnects after a network error or a clean end of the stream (WHATWG HTML
    /// §9.2.3 "reestablish the connection").
    ///
    /// The delay before reconnect attempt `n` (1-based, counting failures in a row):
    /// ```
    /// base    = the server's `retry` (the latest one on this feed), else `initialDelay`
    /// backoff = base × multiplier^(n−1), capped at max(maximumDelay, base)
    /// delay   = backoff + uniform(0 … backoff)     (jitter .additive(1.0), the default)
    /// ```
    /// so a reconnect is never earlier than the server asked (with `.none` or `.additive` jitter;
    /// `.full` and `.equal` may go below the server's `retry`), many clients dropped at once spread
    /// over a window as long as the delay itself (100,000 simulated feeds: `courier-bench --only
    /// fleet`), and a server that accepts and drops at once is retried less and less often. The
    /// attempt counter resets only after a connection stayed open for `stableThreshold`.
    public struct ReconnectPolicy: Sendable, Hashable {
        /// The wait before each reconnect attempt. Its `Backoff.initialDelay` stands for the
        /// reconnection time until the server sends a `retry` field, which replaces it (and lifts
        /// the cap to itself when larger). Jitter is `Backoff.Jitter.additive(_:)` by default, so
        /// a reconnect is never earlier than the server asked.
        public var backoff: Backoff
        /// The reconnection time before the server sent a `retry` field; 3 s by default (what
        /// browsers use). ``backoff``'s `Backoff.initialDelay`.
        public var initialDelay: Duration {
            get { backoff.initialDelay }
            set { backoff.initialDelay = Swift.max(.zero, newValue) }
        }
        /// Growth factor per further failed attempt in a row (≥ 1); 2 by default.
        public var multiplier: Double {
            get { backoff.multiplier }
            set { backoff.multiplier = newValue.isFinite ? Swift.max(1, newValue) : 1 }
        }
        /// Cap on the delay before jitter; 30 s by default. A server `retry` above it is honoured
        /// (up to ``maximumServerRetry``).
        /// The jitter is added after the cap: with the default `.additive(1.0)` a capped delay is
        /// 30–60 s.
        public var maximumDelay: Duration {
            get { backoff.maximumDelay }
            set { backoff.maximumDelay = Swift.max(.zero, newValue) }
        }
        /// How the delay is randomised; `.additive(1.0)` (up to as much again) by default.
        public var jitter: Backoff.Jitter {
            get { backoff.jitter }
            set { backoff.jitter = newValue }
        }
        /// A connection open at least this long resets the attempt counter; 10 s by default.
        public var stableThreshold: Duration
        /// Give up after this many reconnect attempts in a row without a stable connection
        /// (the last error is thrown); `nil` (the default) keeps trying.
        public var maximumAttempts: Int?
        /// The longest reconnection time a server's `retry` field sets; 1 hour by default. A larger
        /// `retry` (a server that sent `retry: 99999999999999999999`, which parses as centuries) is
        /// taken as this value, so a feed is never parked beyond it.
        public var maximumServerRetry: Duration {
            get { serverRetryCap }
            set { serverRetryCap = Swift.max(.zero, newValue) }
        }
        private var serverRetryCap: Duration = .seconds(3600)

        /// Creates a policy; see the properties for the defaults.
        public init(
            initialDelay: Duration = .seconds(3), multiplier: Double = 2, maximumDelay: Duration = .seconds(30),
            jitter: Backoff.Jitter = .additive(1.0), stableThreshold: Duration = .seconds(10), maximumAttempts: Int? = nil
        ) {
            self.backoff = Backoff(
                initialDelay: initialDelay, multiplier: multiplier, maximumDelay: maximumDelay, jitter: jitter)
            self.stableThreshold = stableThreshold
            self.maximumAttempts = maximumAttempts.map { Swift.max(0, $0) }
        }

        /// The defaults.
        public static let standard = ReconnectPolicy()
        /// Never reconnect: the feed ends with the first connection (a network error is thrown).
        public static let never = ReconnectPolicy(maximumAttempts: 0)

        /// The delay before attempt `attempt` (1-based).
        /// - Parameters:
        ///   - attempt: Reconnect attempts in a row, this one included.
        ///   - serverRetry: The latest `retry` the server sent, if any.
        ///   - random: A value in `0..<1`.
        package func delay(forAttempt attempt: Int, serverRetry: Duration?, random: Double) -> Duration {
            var effective = backoff
            if let serverRetry {
                effective.initialDelay = Swift.min(Swift.max(.zero, serverRetry), maximumServerRetry)
                effective.maximumDelay = Swift.max(backoff.maximumDelay, effective.initialDelay)
            }
            if attempt > 1 {
                // A base of zero (`retry: 0`, or an initial delay of zero) grows to nothing: the
                // first reconnect goes at once, the following ones back off from a floor.
                effective.initialDelay = Swift.max(effective.initialDelay, Self.growthFloor)
                effective.maximumDelay = Swift.max(effective.maximumDelay, effective.initialDelay)
            }
            return effective.delay(afterFailures: attempt, random: random)
        }

        /// The smallest base the delays of a second and later reconnect in a row grow from: 100 ms.
        static let growthFloor: Duration = .milliseconds(100)
    }
}
