/// A forward-only cursor over a string's UTF-8 bytes, with the small
/// vocabulary the ISO 8601 parser needs. Value type; no shared state.
struct ByteScanner {
    private let bytes: [UInt8]
    private var position = 0

    init(_ string: String) {
        bytes = Array(string.utf8)
    }

    /// Whether every byte has been consumed.
    var isAtEnd: Bool { position == bytes.count }

    /// The next byte without consuming it, or `nil` at the end.
    var peek: UInt8? { position < bytes.count ? bytes[position] : nil }

    /// Consumes `byte` if it is next; returns whether it did.
    mutating func consume(_ byte: UInt8) -> Bool {
        guard peek == byte else { return false }
        position += 1
        return true
    }

    /// Consumes the next byte if it is one of `candidates`, returning it.
    mutating func consume(anyOf candidates: [UInt8]) -> UInt8? {
        guard let next = peek, candidates.contains(next) else { return nil }
        position += 1
        return next
    }

    /// Consumes exactly `count` ASCII digits and returns their decimal value,
    /// or returns `nil` (consuming nothing) if fewer digits are present.
    mutating func scanDigits(exactly count: Int) -> Int? {
        guard position + count <= bytes.count else { return nil }
        var value = 0
        for offset in 0..<count {
            guard let digit = Self.digitValue(bytes[position + offset]) else { return nil }
            value = value * 10 + digit
        }
        position += count
        return value
    }

    /// Consumes one or more ASCII digits as a decimal fraction and returns it
    /// in nanoseconds (digits past the ninth are consumed but ignored), or
    /// `nil` if no digit is next.
    mutating func scanFractionNanoseconds() -> Int? {
        var nanoseconds = 0
        var digitCount = 0
        while let next = peek, let digit = Self.digitValue(next) {
            if digitCount < 9 {
                nanoseconds = nanoseconds * 10 + digit
            }
            digitCount += 1
            position += 1
        }
        guard digitCount > 0 else { return nil }
        for _ in min(digitCount, 9)..<9 {
            nanoseconds *= 10
        }
        return nanoseconds
    }

    private static func digitValue(_ byte: UInt8) -> Int? {
        (0x30...0x39).contains(byte) ? Int(byte - 0x30) : nil
    }
}
