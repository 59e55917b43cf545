import Courier

/// A ``WebSocketTransport`` running Courier's RFC 6455 client over byte streams from `openStream`
/// (libcurl on Linux via ``RFC6455Transport/curl()``; an in-memory pipe in tests).
package struct RFC6455Transport: WebSocketTransport {
    /// Opens the byte connection (TCP, TLS, proxy) for a request.
    package let openStream: @Sendable (WebSocketRequest) async throws -> any ByteStream
    /// Split outgoing messages into frames of at most this many bytes (nil: one frame each).
    package var fragmentSize: Int?
    /// How long to wait for the server's Close after ours (and to linger after failing).
    package var closeTimeout: Duration = .seconds(5)
    /// The connection's timers (write deadlines, close timeout): `Task.sleep` unless a test injects one.
    package var sleep: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }

    package init(fragmentSize: Int? = nil, openStream: @escaping @Sendable (WebSocketRequest) async throws -> any ByteStream) {
        self.openStream = openStream
        self.fragmentSize = fragmentSize
    }

    package func connect(_ request: WebSocketRequest) async throws -> any WebSocketConnection {
        try request.validate()
        let clock = ContinuousClock()
        let started = clock.now
        let stream = try await openStream(request)
        // A server that accepts TCP but never answers the handshake must not hang the caller:
        // closing the stream at the deadline makes the pending read return EOF. The deadline is
        // the attempt's: the handshake gets what TCP, TLS and the proxy left of the connect timeout.
        let timeout = request.connectTimeout
        let left = timeout - started.duration(to: clock.now)
        let expired = Locked(false)
        let watchdog = Task {
            try await Task.sleep(for: max(.zero, left))
            expired.set(true)
            stream.close()
        }
        defer { watchdog.cancel() }
        do {
            // A cancelled attempt (`close()` or `enterBackground()` while the server has not
            // answered) closes the stream too: the pending read ends now, not at the deadline,
            // and the socket is not left open for the next attempt to wait behind.
            let outcome = try await withTaskCancellationHandler {
                try await OpeningHandshake.perform(on: stream, request: request)
            } onCancel: {
                stream.close()
            }
            let connection = RFC6455Connection(
                stream: stream, leftover: outcome.leftover, subprotocol: outcome.subprotocol,
                maximumMessageSize: request.maximumMessageSize, fragmentSize: fragmentSize, closeTimeout: closeTimeout,
                writeTimeout: request.writeTimeout, sleep: sleep, compression: try outcome.compression.map(DeflateCodec.init),
                bufferLimit: request.bufferLimit)
            await connection.start()
            return connection
        } catch {
            stream.close()
            if Task.isCancelled { throw CancellationError() }
            // The watchdog's close looks like the server's EOF to the pending read: say what happened.
            if expired.current {
                throw WebSocketError.connectionFailed(
                    "no WebSocket handshake response within \(ReconnectPolicy.seconds(timeout)) s (connect timeout)")
            }
            throw error
        }
    }
}
