/// A ``WebSocketClient``'s counters since it was created, over every connection of its session:
/// read ``WebSocketClient/metrics`` for a debug screen or a test, or attach a `NetworkMetricsSink`
/// (``WebSocketClient/Configuration/metrics``) for one `WebSocketMetricsEvent` per connection.
///
/// Messages and bytes are **payload bytes** of complete messages (RFC 6455 §5.6: the UTF-8 bytes
/// of a text message, the bytes of a binary one), before compression on the way out and after
/// decompression on the way in, without frame headers. The compressed bytes of a connection with
/// permessage-deflate (RFC 7692) are in its `WebSocketMetricsEvent` (`wireBytesSent`,
/// `wireBytesReceived`). Control frames are not messages.
public struct WebSocketSessionMetrics: Sendable, Hashable {
    /// Opening handshakes that succeeded (RFC 6455 §4.1): the first connection and every reconnect.
    public var connects = 0
    /// Connections opened after the session's first one: ``connects`` minus 1 once open.
    public var reconnects = 0
    /// Opening handshakes that failed: refused (any HTTP status but 101, a 401 before a token
    /// refresh included), redirected, unreachable, or a 101 the client could not accept.
    public var handshakeFailures = 0
    /// Messages the client wrote: the app's, subscriptions and their re-sends, gap requests.
    public var messagesSent = 0
    /// Payload bytes of ``messagesSent``.
    public var bytesSent = 0
    /// Messages received.
    public var messagesReceived = 0
    /// Payload bytes of ``messagesReceived``.
    public var bytesReceived = 0
    /// How many connections ended with each close code (RFC 6455 §7.4; 1006 for a connection lost
    /// without a Close frame, 1005 for a Close frame without a code).
    public var closeCodes: [WebSocketCloseCode: Int] = [:]
    /// The close code of the connection that ended last; `nil` before one ended.
    public var lastCloseCode: WebSocketCloseCode?
    /// Keepalive pings sent.
    public var pingsSent = 0
    /// Pongs that answered them.
    public var pongsReceived = 0
    /// The time from the last answered ping to its pong, on the client's clock.
    public var lastRoundTripTime: Duration?

    /// Empty counters.
    public init() {}

    /// Adds one connection's traffic.
    mutating func add(_ traffic: ConnectionMeter.Traffic) {
        messagesSent += traffic.messagesSent
        bytesSent += traffic.bytesSent
        messagesReceived += traffic.messagesReceived
        bytesReceived += traffic.bytesReceived
        pingsSent += traffic.pingsSent
        pongsReceived += traffic.pongsReceived
        if let rtt = traffic.lastRoundTripTime { lastRoundTripTime = rtt }
    }

    /// Records the end of a connection with `code`.
    mutating func recordClose(_ code: WebSocketCloseCode) {
        closeCodes[code, default: 0] += 1
        lastCloseCode = code
    }
}
