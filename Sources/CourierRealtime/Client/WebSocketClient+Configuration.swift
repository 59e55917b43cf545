import Courier
import Foundation

extension WebSocketClient {
    /// Everything a ``WebSocketClient`` needs; fixed at creation.
    public struct Configuration: Sendable {
        /// The `ws://` or `wss://` endpoint.
        public var url: URL
        /// Extra handshake headers (never `Authorization` when `tokenManager` is set: it adds its own).
        public var headers: [String: String] = [:]
        /// Subprotocols to offer (`Sec-WebSocket-Protocol`, RFC 6455 §1.9); a server selecting one not
        /// offered, or selecting any when none was offered, fails the handshake.
        public var subprotocols: [String] = []
        /// Ping interval and pong timeout; nil sends no pings.
        public var keepalive: KeepalivePolicy? = KeepalivePolicy()
        /// Reconnect backoff and when to stop.
        public var reconnect: ReconnectPolicy = .standard
        /// Largest message accepted, in bytes; a larger one closes with 1009 (then reconnects).
        public var maximumMessageSize: Int = 16 << 20
        /// A PEM file of certificate authorities trusted for `wss://` instead of the system's (a
        /// private CA, a test server's self-signed certificate). Linux transport only; on Apple
        /// platforms setting it fails the connection with ``WebSocketError/unsupported(_:)``.
        public var trustedCertificateAuthorities: URL?
        /// Limit for TCP, TLS and the handshake of one attempt.
        public var connectTimeout: Duration = .seconds(15)
        /// Supplies `Authorization: Bearer` for the handshake; a 401 handshake refreshes once and
        /// retries; a second 401 or an expired session ends the session (state `closed`, 1008).
        public var tokenManager: TokenManager?
        /// Sequence-number gap detection; nil tracks nothing.
        public var sequenceTracking: SequenceTracking?

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
            return WebSocketRequest(
                url: url, headers: headers, subprotocols: subprotocols, maximumMessageSize: maximumMessageSize,
                trustedCertificateAuthorities: trustedCertificateAuthorities, connectTimeout: connectTimeout)
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
