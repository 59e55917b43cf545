/// Reads server frames incrementally from a byte buffer (RFC 6455 §5.2) and rejects what a client
/// must not accept: reserved bits set without a negotiated extension (§5.2), reserved opcodes
/// (§5.2), masked server frames (§5.1), control frames that are fragmented or longer than 125 bytes
/// (§5.5), a 64-bit length with its top bit set (§5.2), and frames above the message size limit.
/// With permessage-deflate negotiated, RSV1 is accepted on the first frame of a data message only
/// (RFC 7692 §6: never on control frames or continuation frames).
struct FrameParser {
    /// The largest payload accepted for one frame, in bytes.
    let maximumPayload: Int
    /// permessage-deflate was negotiated: RSV1 marks a compressed message.
    var allowsCompression = false
    private var buffer: [UInt8] = []
    private var start = 0

    /// - Parameter maximumPayload: The limit in bytes; a negative one is taken as 0 (every
    ///   non-empty frame is too big), and `Int.max` means no limit of the parser's own.
    init(maximumPayload: Int) {
        self.maximumPayload = max(0, maximumPayload)
    }

    /// Adds bytes read from the connection.
    mutating func append(_ bytes: [UInt8]) {
        if start > 0, start >= buffer.count / 2 {
            buffer.removeFirst(start)
            start = 0
        }
        buffer += bytes
    }

    /// The next complete frame, or nil when more bytes are needed.
    ///
    /// - Throws: ``WebSocketError/protocolError(_:)`` or ``WebSocketError/messageTooBig(limit:)``.
    mutating func next() throws -> Frame? {
        let available = buffer.count - start
        guard available >= 2 else { return nil }
        let first = buffer[start]
        let second = buffer[start + 1]
        let rsv1 = first & 0x40 != 0
        guard first & 0x30 == 0, !rsv1 || allowsCompression else {
            throw WebSocketError.protocolError("reserved bits set without an extension (RFC 6455 §5.2)")
        }
        guard let opcode = Opcode(rawValue: first & 0x0F) else {
            throw WebSocketError.protocolError("reserved opcode 0x\(String(first & 0x0F, radix: 16)) (RFC 6455 §5.2)")
        }
        if rsv1, opcode.isControl || opcode == .continuation {
            throw WebSocketError.protocolError("RSV1 set on a control or continuation frame (RFC 7692 §6.1)")
        }
        let fin = first & 0x80 != 0
        guard second & 0x80 == 0 else { throw WebSocketError.protocolError("a server frame was masked (RFC 6455 §5.1)") }
        var headerLength = 2
        var length = UInt64(second & 0x7F)
        if length == 126 {
            guard available >= 4 else { return nil }
            length = UInt64(buffer[start + 2]) << 8 | UInt64(buffer[start + 3])
            headerLength = 4
        } else if length == 127 {
            guard available >= 10 else { return nil }
            length = (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(buffer[start + 2 + $1]) }
            guard length >> 63 == 0 else {
                throw WebSocketError.protocolError("64-bit length with the top bit set (RFC 6455 §5.2)")
            }
            headerLength = 10
        }
        if opcode.isControl {
            guard fin else { throw WebSocketError.protocolError("fragmented control frame (RFC 6455 §5.5)") }
            guard length <= 125 else { throw WebSocketError.protocolError("control frame longer than 125 bytes (RFC 6455 §5.5)") }
        }
        // The message limit is for data: a control frame is at most 125 bytes whatever it is.
        guard opcode.isControl || length <= UInt64(maximumPayload) else {
            throw WebSocketError.messageTooBig(limit: maximumPayload)
        }
        // `length` fits in an Int (top bit clear, at most the limit); comparing against what is
        // left after the header cannot overflow, whatever the limit (`Int.max` included).
        let payloadLength = Int(length)
        guard available - headerLength >= payloadLength else { return nil }
        let payloadStart = start + headerLength
        let payload = Array(buffer[payloadStart..<(payloadStart + payloadLength)])
        start = payloadStart + payloadLength
        return Frame(fin: fin, rsv1: rsv1, opcode: opcode, payload: payload)
    }
}
