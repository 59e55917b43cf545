extension WebSocketClient {
    /// The transport ``WebSocketClient/init(configuration:)`` uses on this platform.
    static func platformTransport() -> any WebSocketTransport {
        #if canImport(Darwin)
        URLSessionWebSocketTransport()
        #elseif canImport(CCurl)
        RFC6455Transport.curl()
        #else
        UnavailableTransport()
        #endif
    }
}

/// A platform with neither URLSessionWebSocketTask nor libcurl: every connect fails clearly.
struct UnavailableTransport: WebSocketTransport {
    func connect(_ request: WebSocketRequest) async throws -> any WebSocketConnection {
        throw WebSocketError.unsupported("no WebSocket transport on this platform")
    }
}
