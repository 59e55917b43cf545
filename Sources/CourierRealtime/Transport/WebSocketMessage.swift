import Foundation

/// One complete WebSocket message (RFC 6455 §5.6): a text message (UTF-8, opcode 0x1) or a binary
/// message (opcode 0x2), already reassembled from its fragments.
public enum WebSocketMessage: Sendable, Hashable {
    /// A text message; always valid UTF-8 (a server sending invalid UTF-8 fails the connection
    /// with 1007, RFC 6455 §8.1).
    case text(String)
    /// A binary message.
    case data(Data)

    /// The payload size in bytes (UTF-8 bytes for text).
    public var byteCount: Int {
        switch self {
        case .text(let text): text.utf8.count
        case .data(let data): data.count
        }
    }

    /// What the message weighs in a buffer bounded by ``WebSocketClient/Configuration/bufferLimit``:
    /// its payload plus what holding one message costs whatever its size (the queue slot, the
    /// value), so a flood of empty or one-byte messages is bounded too.
    package var bufferedWeight: Int { byteCount + Self.bufferedOverhead }

    /// The bytes counted for holding one message besides its payload.
    package static let bufferedOverhead = 64
}
