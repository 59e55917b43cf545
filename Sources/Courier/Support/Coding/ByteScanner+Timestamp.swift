/// ISO 8601 / RFC 3339 grammar on top of ``ByteScanner``.
extension ByteScanner {
    private static let hyphen = UInt8(ascii: "-")
    private static let colon = UInt8(ascii: ":")
    private static let plus = UInt8(ascii: "+")
    private static let dot = UInt8(ascii: ".")
    private static let comma = UInt8(ascii: ",")
    private static let dateTimeSeparators: [UInt8] = [UInt8(ascii: "T"), UInt8(ascii: "t"), UInt8(ascii: " ")]
    private static let zuluDesignators: [UInt8] = [UInt8(ascii: "Z"), UInt8(ascii: "z")]

    /// Scans `full-date [ ("T" / "t" / " ") partial-time time-offset ]`
    /// (RFC 3339 §5.6), validating field ranges. Does not check for trailing
    /// input; callers check ``isAtEnd``.
    /// - Parameter zonelessOffset: The offset east of UTC, in seconds, for a time without a zone
    ///   designator; `nil` rejects such a time.
    mutating func scanTimestamp(zonelessOffset: Int? = nil) -> ParsedTimestamp? {
        guard var result = scanFullDate() else { return nil }
        if isAtEnd { return result }
        guard consume(anyOf: Self.dateTimeSeparators) != nil,
            scanPartialTime(into: &result),
            let offset = isAtEnd ? zonelessOffset : scanTimeOffset()
        else { return nil }
        result.offsetSeconds = offset
        return result
    }

    /// `date-fullyear "-" date-month "-" date-mday`.
    private mutating func scanFullDate() -> ParsedTimestamp? {
        guard let year = scanDigits(exactly: 4), consume(Self.hyphen),
            let month = scanDigits(exactly: 2), consume(Self.hyphen),
            let day = scanDigits(exactly: 2),
            (1...12).contains(month),
            (1...CivilCalendar.daysInMonth(year: year, month: month)).contains(day)
        else { return nil }
        return ParsedTimestamp(year: year, month: month, day: day)
    }

    /// `time-hour ":" time-minute ":" time-second [ time-secfrac ]`.
    /// A comma is accepted as decimal sign as ISO 8601 permits.
    private mutating func scanPartialTime(into result: inout ParsedTimestamp) -> Bool {
        guard let hour = scanDigits(exactly: 2), consume(Self.colon),
            let minute = scanDigits(exactly: 2), consume(Self.colon),
            let second = scanDigits(exactly: 2),
            (0...23).contains(hour), (0...59).contains(minute), (0...59).contains(second)
        else { return false }
        result.hour = hour
        result.minute = minute
        result.second = second
        if consume(Self.dot) || consume(Self.comma) {
            guard let nanoseconds = scanFractionNanoseconds() else { return false }
            result.nanoseconds = nanoseconds
        }
        return true
    }

    /// `"Z" / time-numoffset`, returning the offset east of UTC in seconds.
    /// Numeric offsets may be `±HH:MM`, `±HHMM` or `±HH`.
    private mutating func scanTimeOffset() -> Int? {
        if consume(anyOf: Self.zuluDesignators) != nil { return 0 }
        guard let sign = consume(anyOf: [Self.plus, Self.hyphen]),
            let hours = scanDigits(exactly: 2), (0...23).contains(hours)
        else { return nil }
        var minutes = 0
        if consume(Self.colon) {
            guard let scanned = scanDigits(exactly: 2) else { return nil }
            minutes = scanned
        } else if let scanned = scanDigits(exactly: 2) {
            minutes = scanned
        }
        guard (0...59).contains(minutes) else { return nil }
        let magnitude = hours * 3_600 + minutes * 60
        return sign == Self.plus ? magnitude : -magnitude
    }
}
