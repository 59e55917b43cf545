/// Strict UTF-8 validation (RFC 3629 §4): rejects overlong forms, surrogates (U+D800–U+DFFF),
/// code points above U+10FFFF and truncated sequences. RFC 6455 §8.1 requires a text message to be
/// valid UTF-8 as a whole; a message split across frames may split a code point, so this runs on
/// the reassembled message.
enum UTF8Validation {
    /// Whether `bytes` is well-formed UTF-8.
    static func isValid(_ bytes: some Collection<UInt8>) -> Bool {
        var iterator = bytes.makeIterator()
        while let lead = iterator.next() {
            let continuationCount: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch lead {
            case 0x00...0x7F: continue
            case 0xC2...0xDF: continuationCount = 1
            case 0xE0:
                continuationCount = 2
                lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: continuationCount = 2
            case 0xED:
                continuationCount = 2
                upper = 0x9F
            case 0xF0:
                continuationCount = 3
                lower = 0x90
            case 0xF1...0xF3: continuationCount = 3
            case 0xF4:
                continuationCount = 3
                upper = 0x8F
            default: return false
            }
            for index in 0..<continuationCount {
                guard let byte = iterator.next() else { return false }
                let (low, high): (UInt8, UInt8) = index == 0 ? (lower, upper) : (0x80, 0xBF)
                guard byte >= low, byte <= high else { return false }
            }
        }
        return true
    }
}
