import Courier

/// When and how fast ``WebSocketClient`` reconnects after an unexpected close.
///
/// Delay before attempt `n` (1-based): `min(maximumDelay, initialDelay × multiplier^(n-1))`, then
/// jittered so many clients dropped at once spread their retries (`.full`: uniform in `0...d`;
/// `.equal`: `d/2` plus uniform in `0...d/2`). The attempt counter resets only after a connection
/// stayed open for `stableThreshold`, so a server that accepts and drops at once still backs off.
public struct ReconnectPolicy: Sendable, Hashable {
    /// Delay before the first reconnect attempt, before jitter.
    public var initialDelay: Duration
    /// Growth factor per further attempt (≥ 1).
    public var multiplier: Double
    /// Cap on the delay, before jitter.
    public var maximumDelay: Duration
    /// How the delay is randomised.
    public var jitter: RetryPolicy.Jitter
    /// A connection open at least this long resets the attempt counter.
    public var stableThreshold: Duration
    /// Give up (state `closed`) after this many failed attempts in a row; nil retries forever.
    public var maximumAttempts: Int?
    /// Close codes from the server that end the session instead of reconnecting (policy
    /// violation and the like: reconnecting would be refused the same way).
    public var terminalCloseCodes: Set<WebSocketCloseCode>

    /// - Parameters: see the properties; the defaults suit a mobile app (0.5 s doubling to 30 s,
    ///   equal jitter, reset after 10 s up, stop on 1003, 1008, 1010).
    public init(
        initialDelay: Duration = .milliseconds(500), multiplier: Double = 2, maximumDelay: Duration = .seconds(30),
        jitter: RetryPolicy.Jitter = .equal, stableThreshold: Duration = .seconds(10), maximumAttempts: Int? = nil,
        terminalCloseCodes: Set<WebSocketCloseCode> = [.unsupportedData, .policyViolation, .mandatoryExtension]
    ) {
        self.initialDelay = initialDelay
        self.multiplier = max(1, multiplier)
        self.maximumDelay = maximumDelay
        self.jitter = jitter
        self.stableThreshold = stableThreshold
        self.maximumAttempts = maximumAttempts
        self.terminalCloseCodes = terminalCloseCodes
    }

    /// The defaults.
    public static let standard = ReconnectPolicy()
    /// Never reconnect: the first unexpected close ends the session.
    public static let never = ReconnectPolicy(maximumAttempts: 0)

    /// The delay before attempt `attempt` (1-based); `random` returns a value in `0..<1`.
    package func delay(forAttempt attempt: Int, random: () -> Double) -> Duration {
        let initial = Self.seconds(initialDelay)
        let cap = Self.seconds(maximumDelay)
        let exponent = Double(max(0, attempt - 1))
        let backoff = min(cap, initial * power(multiplier, exponent))
        let jittered: Double =
            switch jitter {
            case .none: backoff
            case .full: backoff * random()
            case .equal: backoff / 2 + backoff / 2 * random()
            }
        return .nanoseconds(Int64((max(0, jittered) * 1e9).rounded()))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// `base` to a whole-number power, saturating early (delays are capped anyway).
private func power(_ base: Double, _ exponent: Double) -> Double {
    var result = 1.0
    var remaining = Int(exponent.rounded(.down))
    var factor = base
    while remaining > 0 {
        if remaining & 1 == 1 { result *= factor }
        factor *= factor
        remaining >>= 1
        if result > 1e12 { return result }
    }
    return result
}
