import Courier
import Foundation

/// What went wrong with a WebSocket connection. Every failure of ``WebSocketClient`` and of the
/// transports under it is one of these cases.
public enum WebSocketError: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError, DescribedError {
    /// The URL is not a `ws://` or `wss://` URL with a host (RFC 6455 §3).
    case invalidURL(String)
    /// TCP, TLS or proxy setup failed before the handshake (the transport's message).
    case connectionFailed(String)
    /// The server answered the opening handshake with an HTTP status other than 101 (RFC 6455
    /// §4.1: the client fails the connection). 401 makes the client refresh its token once.
    case handshakeRejected(status: Int)
    /// The server answered the opening handshake with a redirect (HTTP 3xx; `location` is its
    /// `Location` field, if any). Courier does not follow WebSocket redirects (as browsers do not,
    /// per the Fetch standard's WebSocket handshake): the session ends without reconnecting —
    /// point the configuration at the final URL.
    case handshakeRedirected(status: Int, location: String?)
    /// The server's 101 response breaks RFC 6455 §4.1: missing `Upgrade`/`Connection` or a wrong
    /// `Sec-WebSocket-Accept`.
    case invalidHandshake(String)
    /// The server's 101 response negotiated what the client cannot use (RFC 6455 §4.1, the
    /// client's checks 5–6): a subprotocol it did not offer, none when
    /// ``WebSocketClient/Configuration/requiresSubprotocol`` is set, or an extension it did not
    /// offer. The same server answers the same way on retry, so the session ends without
    /// reconnecting.
    case negotiationFailed(String)
    /// The server broke the framing rules (RFC 6455 §5); the client closed with 1002.
    case protocolError(String)
    /// A text message or close reason was not valid UTF-8 (RFC 6455 §8.1); closed with 1007.
    case invalidUTF8
    /// A message exceeded the configured maximum size in bytes; closed with 1009.
    case messageTooBig(limit: Int)
    /// No pong arrived within the keepalive timeout (seconds); the connection was dropped.
    case pongTimeout(seconds: Double)
    /// A write made no progress for this long (seconds): the peer stopped reading (its TCP
    /// window is full) or the path is dead. The connection was dropped (reported as 1006).
    case writeTimeout(seconds: Double)
    /// The connection is not open (never opened, closing or closed).
    case notConnected
    /// The connection closed, with the code and reason reported (1006 when TCP was lost).
    case closed(code: WebSocketCloseCode, reason: String)
    /// An option this platform's transport cannot honour (for example a custom CA file on Apple).
    case unsupported(String)

    /// `url` as an error text shows it: without its user, password, query and fragment, where
    /// tokens travel (a `?…` marks a removed query). The case's value keeps the whole URL.
    static func shown(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.host != nil else {
            return url.contains("?") || url.contains("@") ? "<a URL with credentials, not shown>" : url
        }
        let hadQuery = components.query != nil
        components.user = nil
        components.password = nil
        components.query = nil
        components.fragment = nil
        return (components.string ?? "<not shown>") + (hadQuery ? "?…" : "")
    }

    public var description: String {
        switch self {
        case .invalidURL(let url): "not a ws:// or wss:// URL: \(Self.shown(url))"
        case .connectionFailed(let message): "could not connect: \(message)"
        case .handshakeRejected(let status): "the server rejected the WebSocket handshake with HTTP \(status)"
        case .handshakeRedirected(let status, let location):
            "the server redirected the WebSocket handshake with HTTP \(status)\(location.map { " to \(Self.shown($0))" } ?? ""); redirects are not followed"
        case .invalidHandshake(let message): "invalid WebSocket handshake response: \(message)"
        case .negotiationFailed(let message): "WebSocket handshake negotiation failed: \(message)"
        case .protocolError(let message): "WebSocket protocol error: \(message)"
        case .invalidUTF8: "a text message was not valid UTF-8"
        case .messageTooBig(let limit): "a message exceeded the \(limit)-byte limit"
        case .pongTimeout(let seconds): "no pong within \(seconds) s"
        case .writeTimeout(let seconds): "a write made no progress for \(seconds) s: the server stopped reading"
        case .notConnected: "the WebSocket is not connected"
        case .closed(let code, let reason): "the WebSocket closed with \(code)\(reason.isEmpty ? "" : ": \(reason)")"
        case .unsupported(let message): "unsupported on this platform: \(message)"
        }
    }

    /// The close code this failure is reported with.
    var closeCode: WebSocketCloseCode {
        switch self {
        case .protocolError: .protocolError
        case .invalidUTF8: .invalidFramePayloadData
        case .messageTooBig: .messageTooBig
        case .closed(let code, _): code
        default: .abnormalClosure
        }
    }
}

/// A handshake the server refused for now with a `Retry-After` (429 Too Many Requests or 503
/// Service Unavailable, RFC 9110 §10.2.3): the failure, and how long the server asked the client
/// to wait. ``WebSocketClient`` makes its next attempt no earlier (at most an hour later).
struct HandshakeRetryAfter: Error, Sendable {
    let failure: WebSocketError
    let wait: Duration
}
