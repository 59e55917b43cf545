/// A WebSocket frame opcode (RFC 6455 §5.2). 0x3–0x7 and 0xB–0xF are reserved.
enum Opcode: UInt8, Sendable {
    case continuation = 0x0
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Control frames (§5.5): close, ping, pong.
    var isControl: Bool { rawValue & 0x8 != 0 }
}

/// One frame as read from or written to the wire (RFC 6455 §5.2), payload already unmasked.
struct Frame: Sendable, Equatable {
    var fin: Bool
    /// RSV1: with permessage-deflate negotiated, set on the first frame of a compressed message
    /// (the "Per-Message Compressed" bit, RFC 7692 §6).
    var rsv1: Bool
    var opcode: Opcode
    var payload: [UInt8]

    init(fin: Bool = true, rsv1: Bool = false, opcode: Opcode, payload: [UInt8] = []) {
        self.fin = fin
        self.rsv1 = rsv1
        self.opcode = opcode
        self.payload = payload
    }
}
