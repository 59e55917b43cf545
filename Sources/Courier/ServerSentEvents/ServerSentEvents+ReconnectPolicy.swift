extension ServerSentEvents {
    /// When a feed reconnects after a network error or a clean end of the stream (WHATWG HTML
    /// §9.2.3 "reestablish the connection").
    ///
    /// The delay before reconnect attempt `n` (1-based, counting failures in a row):
    /// ```
    /// base    = the server's `retry` (the latest one on this feed), else `initialDelay`
    /// backoff = base × multiplier^(n−1), capped at max(maximumDelay, base)
    /// delay   = backoff + uniform(0 … jitter × backoff)
    /// ```
    /// so a reconnect is never earlier than the server asked, many clients dropped at once spread
    /// out, and a server that accepts and drops at once is retried less and less often. The
    /// attempt counter resets only after a connection stayed open for `stableThreshold`.
    public struct ReconnectPolicy: Sendable, Hashable {
        /// The reconnection time before the server sent a `retry` field; 3 s by default (what
        /// browsers use).
        public var initialDelay: Duration
        /// Growth factor per further failed attempt in a row (≥ 1); 2 by default.
        public var multiplier: Double
        /// Cap on the delay before jitter; 30 s by default. A server `retry` above it is honoured.
        public var maximumDelay: Duration
        /// The random extra delay as a fraction of the backoff (0…1); 0.2 by default.
        public var jitter: Double
        /// A connection open at least this long resets the attempt counter; 10 s by default.
        public var stableThreshold: Duration
        /// Give up after this many reconnect attempts in a row without a stable connection
        /// (the last error is thrown); `nil` (the default) keeps trying.
        public var maximumAttempts: Int?

        /// Creates a policy; see the properties for the defaults.
        public init(
            initialDelay: Duration = .seconds(3), multiplier: Double = 2, maximumDelay: Duration = .seconds(30),
            jitter: Double = 0.2, stableThreshold: Duration = .seconds(10), maximumAttempts: Int? = nil
        ) {
            self.initialDelay = Swift.max(.zero, initialDelay)
            self.multiplier = Swift.max(1, multiplier.isFinite ? multiplier : 1)
            self.maximumDelay = Swift.max(.zero, maximumDelay)
            self.jitter = Swift.min(1, Swift.max(0, jitter.isFinite ? jitter : 0))
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
            let base = seconds(serverRetry ?? initialDelay)
            let cap = Swift.max(seconds(maximumDelay), base)
            var backoff = base
            for _ in 1..<Swift.max(1, Swift.min(attempt, 64)) where backoff < cap { backoff *= multiplier }
            backoff = Swift.min(backoff, cap)
            let unit = random.isFinite ? Swift.min(Swift.max(random, 0), 1) : 0
            let total = backoff + backoff * jitter * unit
            return .nanoseconds(Int64(Swift.min(total, 9e9) * 1e9))
        }

        private func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }
    }
}
