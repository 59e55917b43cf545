/// Writes client frames (RFC 6455 §5.2–5.3): every client frame is masked with a fresh 32-bit key
/// from a strong source (§5.3, §10.3), and the payload length uses the shortest form (§5.2: 7 bits
/// up to 125, 16 bits up to 65535, else 64 bits).
enum FrameEncoder {
    /// The wire bytes of `frame`, masked with `maskingKey` (4 bytes).
    static func encode(_ frame: Frame, maskingKey: [UInt8]) -> [UInt8] {
        precondition(maskingKey.count == 4, "a masking key is 4 bytes")
        let length = frame.payload.count
        var bytes: [UInt8] = []
        bytes.reserveCapacity(length + 14)
        bytes.append((frame.fin ? 0x80 : 0) | (frame.rsv1 ? 0x40 : 0) | frame.opcode.rawValue)
        switch length {
        case 0...125:
            bytes.append(0x80 | UInt8(length))
        case 126...0xFFFF:
            bytes.append(0x80 | 126)
            bytes.append(UInt8(length >> 8))
            bytes.append(UInt8(length & 0xFF))
        default:
            bytes.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: UInt64(length) >> UInt64(shift)))
            }
        }
        bytes.append(contentsOf: maskingKey)
        let headerLength = bytes.count
        bytes.append(contentsOf: frame.payload)
        let key = (maskingKey[0], maskingKey[1], maskingKey[2], maskingKey[3])
        bytes.withUnsafeMutableBufferPointer { buffer in
            var index = headerLength
            var offset = 0
            while index < buffer.count {
                switch offset & 3 {
                case 0: buffer[index] ^= key.0
                case 1: buffer[index] ^= key.1
                case 2: buffer[index] ^= key.2
                default: buffer[index] ^= key.3
                }
                index += 1
                offset += 1
            }
        }
        return bytes
    }

    /// A fresh masking key from the system's cryptographically secure generator.
    static func freshMaskingKey() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        let value = generator.next() as UInt32
        return [
            UInt8(truncatingIfNeeded: value >> 24), UInt8(truncatingIfNeeded: value >> 16),
            UInt8(truncatingIfNeeded: value >> 8), UInt8(truncatingIfNeeded: value),
        ]
    }

    /// The payload of a Close frame: the code in network byte order, then the UTF-8 reason,
    /// truncated on a character boundary to fit the 125-byte control-frame limit (§5.5, §5.5.1).
    static func closePayload(code: WebSocketCloseCode, reason: String) -> [UInt8] {
        var reasonBytes: [UInt8] = []
        for character in reason {
            let next = Array(String(character).utf8)
            if reasonBytes.count + next.count > 123 { break }
            reasonBytes += next
        }
        return [UInt8(code.rawValue >> 8), UInt8(code.rawValue & 0xFF)] + reasonBytes
    }
}
