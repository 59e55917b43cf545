/// What one open connection reports: messages in order, then exactly one `closed` at the end.
package enum WebSocketConnectionEvent: Sendable, Hashable {
    case message(WebSocketMessage)
    /// The connection ended: the peer's code (1005 when its Close frame had none), the code the
    /// client failed the connection with (1002, 1007, 1009), or 1006 on TCP loss.
    case closed(code: WebSocketCloseCode, reason: String, error: WebSocketError?)
}

/// One open WebSocket connection, whatever carries it (Courier's RFC 6455 client over libcurl,
/// URLSessionWebSocketTask, an in-memory pipe).
package protocol WebSocketConnection: Sendable {
    /// The subprotocol the server selected, if one was offered and accepted.
    var subprotocol: String? { get }
    /// The extensions the server selected (`Sec-WebSocket-Extensions` tokens); empty unless the
    /// transport offered some.
    var extensions: [String] { get }
    /// The compressed payload bytes each way when permessage-deflate was negotiated; `nil`
    /// otherwise (then the wire carries the messages' own bytes).
    var wireTraffic: WireTraffic? { get }
    /// Messages, then one `closed`; single consumer.
    var events: AsyncStream<WebSocketConnectionEvent> { get }
    /// Sends one message. Throws ``WebSocketError/notConnected`` once closing.
    func send(_ message: WebSocketMessage) async throws
    /// Sends a ping; `onPong` runs when the matching pong arrives (never if none does).
    func sendPing(onPong: @escaping @Sendable () -> Void) async throws
    /// Whether a ping still waits to be written behind a frame, how far the writes got, and
    /// whether reading waits for the client; `nil` where the transport cannot tell
    /// (`URLSessionWebSocketTask`). The keepalive gives a ping stuck behind a large message that
    /// is still being written more time for its pong, and a pong not read because the app has not
    /// taken the messages before it.
    var pingWrite: PingWriteProgress? { get async }
    /// Starts the closing handshake (RFC 6455 §7.1.2) and returns when the connection is closed.
    func close(code: WebSocketCloseCode, reason: String) async
    /// Drops the connection without a closing handshake; `events` ends with 1006.
    func abort(_ error: WebSocketError) async
}

/// How far a connection's writes got, and whether its reads wait for the client, for the
/// keepalive (``WebSocketConnection/pingWrite``).
package struct PingWriteProgress: Sendable, Equatable {
    /// One of our pings is queued behind other bytes, not yet written.
    package var pingWaiting: Bool
    /// Bytes written to the connection so far.
    package var bytesWritten: Int
    /// The connection does not read the socket now: messages wait for the client (a slow app);
    /// a pong may be there, unread.
    package var readWaitsForClient = false
    /// How many times reading waited for the client so far.
    package var readWaits = 0

    package init(pingWaiting: Bool, bytesWritten: Int, readWaitsForClient: Bool = false, readWaits: Int = 0) {
        self.pingWaiting = pingWaiting
        self.bytesWritten = bytesWritten
        self.readWaitsForClient = readWaitsForClient
        self.readWaits = readWaits
    }
}

extension WebSocketConnection {
    /// A transport that says nothing about its writes: the keepalive's timeout counts from the
    /// ping's queueing.
    package var pingWrite: PingWriteProgress? { nil }

    /// A transport that offers no extension (URLSessionWebSocketTask, test pipes): none is in use.
    package var extensions: [String] { [] }
    /// A transport without permessage-deflate measures no compressed traffic.
    package var wireTraffic: WireTraffic? { nil }
}

/// Opens WebSocket connections: performs TCP/TLS setup and the opening handshake.
package protocol WebSocketTransport: Sendable {
    /// - Throws: ``WebSocketError`` (`invalidURL`, `connectionFailed`, `handshakeRejected`,
    ///   `invalidHandshake`); ``HandshakeRetryAfter`` for a refusal that names when to come back.
    func connect(_ request: WebSocketRequest) async throws -> any WebSocketConnection
}
