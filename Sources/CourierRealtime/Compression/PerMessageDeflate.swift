/// What ``WebSocketClient`` offers for the permessage-deflate extension (RFC 7692): messages
/// compressed with DEFLATE (RFC 1951), sharing an LZ77 window across messages unless a
/// "no context takeover" parameter is negotiated.
///
/// The client always offers `client_max_window_bits` (RFC 7692 §7.1.2.2), so the server may
/// limit the window of the client's compressor; the fields below add the other parameters of
/// the offer. The server's answer is checked as RFC 7692 §7 asks: an unknown, duplicated or
/// out-of-range parameter, a parameter the offer asked for and the answer lacks, or an extension
/// that was not offered fails the handshake with ``WebSocketError/negotiationFailed(_:)``.
///
/// Incoming messages are inflated in bounded chunks and count against
/// ``WebSocketClient/Configuration/maximumMessageSize`` by their *inflated* size: a small frame
/// that inflates past the limit (a compression bomb) closes the connection with 1009
/// (``WebSocketError/messageTooBig(limit:)``) after at most the limit plus one chunk of memory.
///
/// Applies to Courier's RFC 6455 transport (Linux). On Apple platforms the connection is a
/// `URLSessionWebSocketTask`, which negotiates (or not) on its own; the setting is not used there.
///
/// ```swift
/// var configuration = WebSocketClient.Configuration(url: URL(string: "wss://live.example.com/feed")!)
/// configuration.compression = PerMessageDeflate(serverMaxWindowBits: 10)   // bound the server's window
/// configuration.compression = nil                                          // offer no compression
/// ```
public struct PerMessageDeflate: Sendable, Hashable {
    /// Asks the server to reset its compressor after every message (`server_no_context_takeover`,
    /// RFC 7692 §7.1.1.1): less memory kept for the connection, worse compression of similar
    /// messages. `false` by default.
    public var serverNoContextTakeover: Bool
    /// Tells the server the client resets its compressor after every message
    /// (`client_no_context_takeover`, RFC 7692 §7.1.1.2). The client also does so when the server
    /// asks for it in its answer. `false` by default.
    public var clientNoContextTakeover: Bool
    /// The largest LZ77 window the server may compress with, as a power of two (8–15:
    /// `server_max_window_bits`, RFC 7692 §7.1.2.1), or `nil` to leave it to the server (up to
    /// 32 KiB). Smaller windows bound the memory of the client's decompressor.
    public var serverMaxWindowBits: Int?

    /// An offer; the defaults offer plain permessage-deflate with context takeover both ways.
    ///
    /// - Parameters:
    ///   - serverNoContextTakeover: See ``serverNoContextTakeover``.
    ///   - clientNoContextTakeover: See ``clientNoContextTakeover``.
    ///   - serverMaxWindowBits: See ``serverMaxWindowBits``; clamped to 8–15.
    public init(serverNoContextTakeover: Bool = false, clientNoContextTakeover: Bool = false, serverMaxWindowBits: Int? = nil) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits.map { min(15, max(8, $0)) }
    }
}
