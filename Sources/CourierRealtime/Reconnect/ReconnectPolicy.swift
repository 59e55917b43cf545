import Courier

/// When and how fast ``WebSocketClient`` reconnects after an unexpected close.
///
/// Delay before attempt `n` (1-based): `min(maximumDelay, initialDelay × multiplier^(n-1))`, then
/// jittered so many clients dropped at once spread their retries (`.full`: uniform in `0...d`;
/// `.equal`: `d/2` plus uniform in `0...d/2`). The attempt counter resets only after a connection
/// stayed open for `stableThreshold`, so a server that accepts and drops at once still backs off.
public struct ReconnectPolicy: Sendable, Hashable {
    /// The wait before each reconnect attempt (1-based, counting failed attempts in a row).
    public var backoff: Backoff
    /// Delay before the first reconnect attempt, before jitter (``backoff``'s `initialDelay`).
    public var initialDelay: Duration {
        get { backoff.initialDelay }
        set { backoff.initialDelay = max(.zero, newValue) }
    }
    /// Growth factor per further attempt (≥ 1; ``backoff``'s `multiplier`).
    public var multiplier: Double {
        get { backoff.multiplier }
        set { backoff.multiplier = newValue.isFinite ? max(1, newValue) : 1 }
    }
    /// Cap on the delay, before jitter (``backoff``'s `maximumDelay`).
    public var maximumDelay: Duration {
        get { backoff.maximumDelay }
        set { backoff.maximumDelay = max(.zero, newValue) }
    }
    /// How the delay is randomised (``backoff``'s `jitter`).
    public var jitter: Backoff.Jitter {
        get { backoff.jitter }
        set { backoff.jitter = newValue }
    }
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
        jitter: Backoff.Jitter = .equal, stableThreshold: Duration = .seconds(10), maximumAttempts: Int? = nil,
        terminalCloseCodes: Set<WebSocketCloseCode> = [.unsupportedData, .policyViolation, .mandatoryExtension]
    ) {
        self.backoff = Backoff(
            initialDelay: initialDelay, multiplier: multiplier, maximumDelay: maximumDelay, jitter: jitter)
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
        backoff.delay(afterFailures: attempt, random: random())
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
