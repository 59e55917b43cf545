/// Keepalive for an open connection: a ping every `interval`; a pong missing `timeout` after its
/// ping fails the connection (reported as ``WebSocketError/pongTimeout(seconds:)``, then the
/// reconnect policy applies), so a silent server or a dead NAT mapping never hangs the app.
/// Pings and pongs are RFC 6455 §5.5.2–5.5.3 control frames.
///
/// A ping cannot go inside a frame: queued behind a large message that is still being written, it
/// gets another `timeout` for as long as that message's bytes keep going out (over the RFC 6455
/// transport, which can tell), so a slow upload of a big message is not taken for a dead peer. A
/// write that stops (the peer stopped reading) fails at the timeout as before.
public struct KeepalivePolicy: Sendable, Hashable {
    /// Time between the end of one check and the next ping.
    public var interval: Duration
    /// How long to wait for the pong.
    public var timeout: Duration

    /// - Parameters: interval and timeout; defaults 25 s and 10 s (under common 30–60 s NAT and
    ///   load-balancer idle limits).
    public init(interval: Duration = .seconds(25), timeout: Duration = .seconds(10)) {
        self.interval = interval
        self.timeout = timeout
    }
}
