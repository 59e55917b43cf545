import Foundation

/// Everything a transport needs to open one connection: the URL, the handshake's extra headers
/// (the bearer token among them) and the limits. Built by ``WebSocketClient`` per attempt.
package struct WebSocketRequest: Sendable {
    /// A `ws://` or `wss://` URL.
    package var url: URL
    /// Extra handshake headers (`Authorization`, app headers). Never the RFC 6455 ones.
    package var headers: [(name: String, value: String)]
    /// Subprotocols offered in `Sec-WebSocket-Protocol`, in preference order; empty offers none.
    package var subprotocols: [String]
    /// The largest message accepted, in bytes; larger closes with 1009.
    package var maximumMessageSize: Int
    /// A PEM file of certificate authorities to trust for `wss://` instead of the system's.
    package var trustedCertificateAuthorities: URL?
    /// Limit for TCP + TLS + handshake.
    package var connectTimeout: Duration
    /// Deadline of each write (a slice of at most 64 KiB) on the open connection.
    package var writeTimeout: Duration = .seconds(30)
    /// With subprotocols offered, a 101 selecting none fails the handshake.
    package var requiresSubprotocol = false
    /// The permessage-deflate offer (RFC 7692); nil offers no extension.
    package var compression: PerMessageDeflate?
    /// Bytes of received messages waiting for the client past which the connection stops reading
    /// the socket (nil: never stops).
    package var bufferLimit: Int?
    /// `SO_SNDBUF` for the socket, in bytes (nil: the system's); tests bound it to fill it fast.
    package var sendBufferSize: Int?

    package init(
        url: URL, headers: [(name: String, value: String)] = [], subprotocols: [String] = [],
        maximumMessageSize: Int = 16 << 20, trustedCertificateAuthorities: URL? = nil,
        connectTimeout: Duration = .seconds(15)
    ) {
        self.url = url
        self.headers = headers
        self.subprotocols = subprotocols
        self.maximumMessageSize = maximumMessageSize
        self.trustedCertificateAuthorities = trustedCertificateAuthorities
        self.connectTimeout = connectTimeout
    }

    /// Whether the scheme is `wss`.
    var isSecure: Bool { url.scheme?.lowercased() == "wss" }

    /// Checks the scheme and host (RFC 6455 §3), and that every offered subprotocol is a token
    /// (RFC 6455 §4.1): a comma or a space would offer others, a line break add a header field.
    ///
    /// - Throws: ``WebSocketError/invalidURL(_:)``; ``WebSocketError/negotiationFailed(_:)`` for a
    ///   subprotocol that is not a token (nothing is sent, and the client does not reconnect).
    func validate() throws {
        guard let scheme = url.scheme?.lowercased(), scheme == "ws" || scheme == "wss",
            let host = url.host, !host.isEmpty
        else {
            throw WebSocketError.invalidURL(url.absoluteString)
        }
        for name in subprotocols where !DeflateNegotiation.isToken(name) {
            throw WebSocketError.negotiationFailed(
                "the subprotocol \(name.debugDescription) is not a token (RFC 6455 §4.1) and cannot be offered")
        }
    }
}
