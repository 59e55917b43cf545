/// Where a ``WebSocketClient``'s connection stands, as published by ``WebSocketClient/states()``.
public enum ConnectionState: Sendable, Hashable {
    /// Opening TCP/TLS and the handshake, then re-sending the subscriptions on the new connection.
    case connecting
    /// The handshake succeeded and every registered subscription was sent on this connection;
    /// messages flow and ``WebSocketClient/send(_:)`` is accepted (what the app sends from here
    /// reaches the server after the subscriptions).
    case open
    /// The connection failed or dropped; attempt `attempt` (1-based) starts after `delay`.
    case reconnecting(attempt: Int, delay: Duration)
    /// Ended and not coming back by itself: a deliberate ``WebSocketClient/close(code:reason:)``,
    /// a terminal close code, a rejected handshake, or the attempts ran out. 1006 means the
    /// connection was lost without a Close frame.
    case closed(code: WebSocketCloseCode, reason: String)

    /// True unless `open`: what an app's connectivity model shows as "realtime disconnected".
    public var isRealtimeDisconnected: Bool { self != .open }
}

/// What ``WebSocketClient/events()`` delivers.
public enum RealtimeEvent: Sendable, Hashable {
    /// A message from the server.
    case message(WebSocketMessage)
    /// A reconnect completed and every live subscription was re-sent: refetch what may have been
    /// missed while disconnected.
    case reconnected
    /// Sequence numbers in `missing` never arrived (see ``SequenceTracking``).
    case gap(missing: ClosedRange<Int>)
}
