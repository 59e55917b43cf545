import Foundation

/// Reassembles data frames into messages (RFC 6455 §5.4): a text or binary frame starts a message,
/// continuation frames extend it until FIN; control frames may arrive between fragments and are
/// handled by the caller. Rejects a continuation with no message started and a new message started
/// inside another (§5.4), enforces the message size limit (1009), and validates a finished text
/// message as UTF-8 (§8.1, 1007) — a code point may be split across fragments.
///
/// With permessage-deflate negotiated (an `inflater`), a message whose first frame has RSV1 set is
/// inflated frame by frame as it arrives (RFC 7692 §7.2.2); the limit applies to the inflated size.
struct MessageAssembler {
    /// The largest message accepted, in bytes (inflated size for compressed messages).
    let maximumMessageSize: Int
    /// Decompresses compressed messages; `nil` unless permessage-deflate was negotiated.
    let inflater: RawInflater?
    private var opcode: Opcode?
    private var compressed = false
    private var bytes: [UInt8] = []

    init(maximumMessageSize: Int, inflater: RawInflater? = nil) {
        self.maximumMessageSize = maximumMessageSize
        self.inflater = inflater
    }

    /// Feeds one data frame; returns a message when the frame completes one.
    ///
    /// - Throws: ``WebSocketError/protocolError(_:)``, ``WebSocketError/messageTooBig(limit:)``,
    ///   ``WebSocketError/invalidUTF8``.
    mutating func append(_ frame: Frame) throws -> WebSocketMessage? {
        switch frame.opcode {
        case .text, .binary:
            guard opcode == nil else {
                throw WebSocketError.protocolError("a new message started before the last one finished (RFC 6455 §5.4)")
            }
            guard !frame.rsv1 || inflater != nil else {
                throw WebSocketError.protocolError("RSV1 set without permessage-deflate (RFC 6455 §5.2)")
            }
            opcode = frame.opcode
            compressed = frame.rsv1
            bytes = []
        case .continuation:
            guard opcode != nil else {
                throw WebSocketError.protocolError("continuation frame with no message started (RFC 6455 §5.4)")
            }
        default:
            throw WebSocketError.protocolError("control frame passed to the message assembler")
        }
        if compressed, let inflater {
            try inflater.inflate(frame.payload, onto: &bytes, limit: maximumMessageSize)
            if frame.fin {
                try inflater.finishMessage(onto: &bytes, limit: maximumMessageSize)
            }
        } else {
            guard bytes.count + frame.payload.count <= maximumMessageSize else {
                throw WebSocketError.messageTooBig(limit: maximumMessageSize)
            }
            bytes += frame.payload
        }
        guard frame.fin, let kind = opcode else { return nil }
        let payload = bytes
        opcode = nil
        compressed = false
        bytes = []
        if kind == .text {
            guard UTF8Validation.isValid(payload) else { throw WebSocketError.invalidUTF8 }
            return .text(String(decoding: payload, as: UTF8.self))
        }
        return .data(Data(payload))
    }
}
