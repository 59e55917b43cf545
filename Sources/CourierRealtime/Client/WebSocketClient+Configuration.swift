import Courier
import Foundation

extension WebSocketClient {
    /// Everything a ``WebSocketClient`` needs; fixed at creation.
    public struct Configuration: Sendable {
        /// The `ws://` or `wss://` endpoint.
        public var url: URL
        /// Extra handshake headers (never `Authorization` when `tokenManager` is set: it adds its own).
        /// A field whose name or value holds a CR or LF is left out: it would add fields of its own.
        public var headers: [String: String] = [:]
        /// Subprotocols to offer (`Sec-WebSocket-Protocol`, RFC 6455 §1.9), preferred first; a server
        /// selecting one not offered, or selecting any when none was offered, fails the handshake
        /// with ``WebSocketError/negotiationFailed(_:)`` and the session ends (no reconnect). The
        /// one selected is ``WebSocketClient/subprotocol``. Each is a token (RFC 9110 §5.6.2): one
        /// with a space, a comma, a line break or another separator fails the connection the same
        /// way before anything is sent.
        public var subprotocols: [String] = []
        /// Whether a server that selects none of ``subprotocols`` fails the handshake
        /// (``WebSocketError/negotiationFailed(_:)``, no reconnect) instead of opening without a
        /// subprotocol. `false` by default, as browsers and `URLSessionWebSocketTask` behave;
        /// ignored when no subprotocol is offered.
        public var requiresSubprotocol = false
        /// Ping interval and pong timeout; nil sends no pings.
        public var keepalive: KeepalivePolicy? = KeepalivePolicy()
        /// Reconnect backoff and when to stop.
        public var reconnect: ReconnectPolicy = .standard
        /// Largest message accepted, in bytes; a larger one closes with 1009 (then reconnects).
        /// A compressed message counts by its inflated size: one that inflates past the limit (a
        /// compression bomb) closes with 1009 before more than the limit is held in memory.
        public var maximumMessageSize: Int = 16 << 20
        /// Bytes of received messages the app has not taken yet, per stream from
        /// ``WebSocketClient/messages()`` or ``WebSocketClient/events()``, past which the client
        /// stops reading the connection until the app takes some: TCP's window then slows the
        /// server down, and memory stays bounded (about twice this plus two messages) whatever
        /// the server sends. A message larger than the limit still goes through, alone. 4 MiB by
        /// default.
        ///
        /// A stream the app holds without iterating holds the connection back too: iterate every
        /// stream you ask for, or release it (cancelling its task or dropping it ends it). While
        /// reading waits for the app, the keepalive does not fail the connection for a pong it
        /// has not read (over Courier's RFC 6455 transport, which can tell); the server may close
        /// a connection that stops reading for long (its own timeouts). With
        /// `URLSessionWebSocketTask` (Apple platforms) the client stops asking the task for
        /// messages instead, and the task's own buffering applies.
        public var bufferLimit: Int = 4 << 20
        /// The permessage-deflate offer (RFC 7692): messages compressed with the system zlib
        /// when the server accepts. Offered by default; `nil` offers no extension. Courier's
        /// RFC 6455 transport (Linux); `URLSessionWebSocketTask` decides on its own.
        public var compression: PerMessageDeflate? = PerMessageDeflate()
        /// A PEM file of certificate authorities trusted for `wss://` instead of the system's (a
        /// private CA, a test server's self-signed certificate). Linux transport only; on Apple
        /// platforms setting it fails the connection with ``WebSocketError/unsupported(_:)``.
        public var trustedCertificateAuthorities: URL?
        /// Limit for TCP, TLS and the handshake of one attempt.
        public var connectTimeout: Duration = .seconds(15)
        /// Deadline of every write on an open connection, per slice of at most 64 KiB: a server
        /// that stops reading (its TCP window full) fails the connection with
        /// ``WebSocketError/writeTimeout(seconds:)`` (reported as 1006, then the reconnect policy
        /// applies) instead of blocking `send` and `close()` for ever. 30 s by default. Courier's
        /// RFC 6455 transport (Linux); `URLSessionWebSocketTask` has its own timeouts.
        public var writeTimeout: Duration = .seconds(30)
        /// Supplies `Authorization: Bearer` for the handshake; a 401 handshake refreshes once and
        /// retries; a second 401, an expired session or nobody signed in (a sign-out) ends the
        /// session (state `closed`, 1008): with a token manager the client never connects without
        /// credentials, and a reconnect after another user signed in ends the session too (the
        /// subscriptions were the previous user's; ``WebSocketClient/connect()`` starts one for
        /// the new user). A refresh that fails transiently (offline, a timeout, a 5xx or 429 from
        /// the token endpoint; the manager keeps the user signed in) fails that attempt only
        /// (``WebSocketError/connectionFailed(_:)``), and the ``reconnect`` policy tries again.
        public var tokenManager: TokenManager?
        /// Sequence-number gap detection; nil tracks nothing.
        public var sequenceTracking: SequenceTracking?
        /// Where the connection's log entries go; nil logs nothing. Each connection attempt logs
        /// its handshake (`request` at debug level, with the header fields), then a `response`
        /// (101, info) or a `failure` (error), and an open connection logs a `connectionClosed`
        /// entry when it ends: close code, time open, messages and payload bytes each way (info
        /// for 1000 and 1001, error for 1006, notice otherwise). Everything is redacted by
        /// ``redactor`` first.
        public var logger: (any NetworkLogger)?
        /// Sinks that receive one `WebSocketMetricsEvent` per connection attempt (through
        /// `NetworkMetricsSink.record(_:)`), when its handshake fails or the open connection ends.
        /// The session's running totals are ``WebSocketClient/metrics``.
        public var metrics: [any NetworkMetricsSink] = []
        /// What hides secrets in log entries: the URL's query parameters, the header fields
        /// (`Authorization` and the rest of its list) and always the offered subprotocols
        /// (`Sec-WebSocket-Protocol`), whose values are also scrubbed from error texts and close
        /// reasons. The standard `Redactor()` by default.
        public var redactor = Redactor()

        /// A configuration for `url` with the defaults above.
        public init(url: URL) {
            self.url = url
        }

        func request(token: String?) -> WebSocketRequest {
            var headers = headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
            if let token {
                headers.removeAll { $0.name.lowercased() == "authorization" }
                headers.append((name: "Authorization", value: "Bearer \(token)"))
            }
            var request = WebSocketRequest(
                url: url, headers: headers, subprotocols: subprotocols, maximumMessageSize: maximumMessageSize,
                trustedCertificateAuthorities: trustedCertificateAuthorities, connectTimeout: connectTimeout)
            request.writeTimeout = writeTimeout
            request.requiresSubprotocol = requiresSubprotocol
            request.compression = compression
            request.bufferLimit = max(1, bufferLimit)
            return request
        }
    }
}

/// The client's view of time: sleeping and the time elapsed since creation (an injected `Clock`).
struct ClientClock: Sendable {
    let sleep: @Sendable (Duration) async throws -> Void
    let elapsed: @Sendable () -> Duration

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let start = clock.now
        sleep = { try await clock.sleep(for: $0) }
        elapsed = { start.duration(to: clock.now) }
    }
}
