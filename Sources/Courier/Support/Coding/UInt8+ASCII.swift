extension UInt8 {
    /// Whether the byte is an ASCII letter or digit: RFC 5234 `ALPHA / DIGIT` (Appendix B.1), the
    /// part every token grammar shares (`tchar`, `token68`, `unreserved`…); each adds its own
    /// punctuation.
    package var isASCIIAlphanumeric: Bool {
        switch self {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            false
        }
    }

    /// Whether the byte is an ASCII digit: RFC 5234 `DIGIT`, `0`–`9`.
    package var isASCIIDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
}
