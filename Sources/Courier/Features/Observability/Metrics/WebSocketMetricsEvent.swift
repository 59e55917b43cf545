import Foundation

/// One WebSocket connection attempt, measured: what a `WebSocketClient` (module CourierRealtime)
/// sends to each ``NetworkMetricsSink`` of its configuration when the attempt ends — when its
/// opening handshake fails, or when the open connection closes.
///
/// Message and byte counts are **payload bytes** (RFC 6455 §5.6: the UTF-8 bytes of a text
/// message, the bytes of a binary one) of complete messages, before compression and without
/// framing. With permessage-deflate (RFC 7692) negotiated, the payload bytes as they travelled
/// (compressed) are reported apart: ``wireBytesSent`` and ``wireBytesReceived``. Control frames
/// (ping, pong, close) are not messages; pings are counted apart.
///
/// Dimensions are low-cardinality, like ``NetworkMetricsEvent``'s: ``endpoint`` is the URL
/// without its query or fragment, and no header value or close reason is carried.
public struct WebSocketMetricsEvent: Sendable, Hashable {
    /// The attempt's ID, also in the `NetworkLogEntry` lines about it, to join the two.
    public var connectionID: RequestID
    /// Scheme, host, port and path of the WebSocket URL (`wss://api.example.com/live`): no user
    /// info, query or fragment.
    public var endpoint: String
    /// Whether the session had been open before this attempt: a reconnect after a drop (or after
    /// the app came back to the foreground), not the session's first connection.
    public var isReconnect: Bool
    /// When the attempt started (wall clock).
    public var startedAt: Date
    /// Time from the start of the attempt to the end of the opening handshake (RFC 6455 §4.1) —
    /// TCP, TLS and the HTTP upgrade — whether it succeeded or failed.
    public var handshakeDuration: Duration
    /// Why the handshake failed: `handshakeRejected`, `handshakeRedirected`, `connectionFailed`,
    /// `invalidHandshake`, `negotiationFailed`, `invalidURL`, `unsupported`…; `nil` when the
    /// connection opened.
    public var handshakeFailure: String?
    /// The HTTP status of a rejected or redirected handshake (401, 503, 302…); `nil` otherwise.
    public var handshakeStatus: Int?
    /// How long the connection stayed open, from the handshake to the end; `nil` when it never
    /// opened.
    public var openDuration: Duration?
    /// Messages the client wrote (the app's, subscriptions and their re-sends, gap requests).
    public var messagesSent: Int
    /// Payload bytes of ``messagesSent``, before compression.
    public var bytesSent: Int
    /// Messages received and delivered.
    public var messagesReceived: Int
    /// Payload bytes of ``messagesReceived``, after decompression.
    public var bytesReceived: Int
    /// With permessage-deflate negotiated (RFC 7692): the frame payload bytes ``messagesSent``
    /// took on the wire, compressed (without frame headers); `nil` without it (the wire then
    /// carries ``bytesSent``) and with `URLSessionWebSocketTask`, which does not report them.
    public var wireBytesSent: Int?
    /// With permessage-deflate negotiated: the frame payload bytes ``messagesReceived`` took on
    /// the wire, before inflation; `nil` as for ``wireBytesSent``.
    public var wireBytesReceived: Int?
    /// The close code the connection ended with (RFC 6455 §7.4): the server's or the client's,
    /// 1005 when a Close frame had none, 1006 when the connection was lost without one; `nil`
    /// when it never opened.
    public var closeCode: Int?
    /// Keepalive pings the client sent.
    public var pingsSent: Int
    /// Pongs that answered them.
    public var pongsReceived: Int
    /// The time from the last answered ping to its pong, on the client's clock; `nil` when no
    /// pong arrived.
    public var lastRoundTripTime: Duration?

    /// Creates an event.
    package init(
        connectionID: RequestID, endpoint: String, isReconnect: Bool, startedAt: Date, handshakeDuration: Duration,
        handshakeFailure: String? = nil, handshakeStatus: Int? = nil, openDuration: Duration? = nil,
        messagesSent: Int = 0, bytesSent: Int = 0, messagesReceived: Int = 0, bytesReceived: Int = 0,
        wireBytesSent: Int? = nil, wireBytesReceived: Int? = nil, closeCode: Int? = nil, pingsSent: Int = 0,
        pongsReceived: Int = 0, lastRoundTripTime: Duration? = nil
    ) {
        self.connectionID = connectionID
        self.endpoint = endpoint
        self.isReconnect = isReconnect
        self.startedAt = startedAt
        self.handshakeDuration = handshakeDuration
        self.handshakeFailure = handshakeFailure
        self.handshakeStatus = handshakeStatus
        self.openDuration = openDuration
        self.messagesSent = messagesSent
        self.bytesSent = bytesSent
        self.messagesReceived = messagesReceived
        self.bytesReceived = bytesReceived
        self.wireBytesSent = wireBytesSent
        self.wireBytesReceived = wireBytesReceived
        self.closeCode = closeCode
        self.pingsSent = pingsSent
        self.pongsReceived = pongsReceived
        self.lastRoundTripTime = lastRoundTripTime
    }
}

extension NetworkMetricsSink {
    /// Ignores WebSocket connection events: a sink that wants them implements
    /// ``NetworkMetricsSink/record(_:)-(WebSocketMetricsEvent)``.
    public func record(_ event: WebSocketMetricsEvent) {}
}
