import Foundation

/// The HTTP-date grammar of RFC 9110 §5.6.7, applied exactly, for freshness decisions.
///
/// ``HTTPDate/parse(_:)`` is lenient on purpose (a misread `Retry-After` only changes a wait), but
/// a lenient `Expires` can turn a malformed value into a date far in the future and make a
/// response fresh. RFC 9111 §5.3 says a cache must treat an invalid `Expires` as already expired,
/// so the cache reads dates with this parser: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the
/// obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`),
/// each with its exact separators and digit counts. Names are compared ignoring ASCII case;
/// anything else (a missing comma, doubled spaces, a one-digit hour, `UTC`) is `nil`.
enum StrictHTTPDate {
    private static let weekdays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longWeekdays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The instant `text` names, or `nil` when it is not exactly one of the three forms.
    /// - Parameter now: For RFC 850's two-digit years (a year more than 50 years ahead is in the
    ///   previous century, RFC 9110 §5.6.7).
    static func parse(_ text: String, now: Date = Date()) -> Date? {
        let bytes = Array(text.utf8)
        if bytes.count == 29 { return imfFixdate(bytes) }
        if bytes.count == 24 { return asctime(bytes) }
        return rfc850(bytes, now: now)
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT`.
    private static func imfFixdate(_ b: [UInt8]) -> Date? {
        guard name(b, 0, 3, in: weekdays) != nil, b[3] == 0x2C, b[4] == 0x20, b[7] == 0x20, b[11] == 0x20,
            b[16] == 0x20, b[25] == 0x20, name(b, 26, 3, in: ["gmt"]) != nil,
            let day = number(b, 5, 2), let month = name(b, 8, 3, in: months), let year = number(b, 12, 4)
        else { return nil }
        return make(year: year, month: month + 1, day: day, clock: b, at: 17)
    }

    /// `Sun Nov  6 08:49:37 1994` (the day is space-padded to two characters).
    private static func asctime(_ b: [UInt8]) -> Date? {
        guard name(b, 0, 3, in: weekdays) != nil, b[3] == 0x20, b[7] == 0x20, b[10] == 0x20, b[19] == 0x20,
            let month = name(b, 4, 3, in: months), let year = number(b, 20, 4)
        else { return nil }
        let day = b[8] == 0x20 ? number(b, 9, 1) : number(b, 8, 2)
        guard let day else { return nil }
        return make(year: year, month: month + 1, day: day, clock: b, at: 11)
    }

    /// `Sunday, 06-Nov-94 08:49:37 GMT`.
    private static func rfc850(_ b: [UInt8], now: Date) -> Date? {
        guard let comma = b.firstIndex(of: 0x2C), name(b, 0, comma, in: longWeekdays) != nil,
            b.count == comma + 24, b[comma + 1] == 0x20, b[comma + 4] == 0x2D, b[comma + 8] == 0x2D,
            b[comma + 11] == 0x20, b[comma + 20] == 0x20, name(b, comma + 21, 3, in: ["gmt"]) != nil,
            let day = number(b, comma + 2, 2), let month = name(b, comma + 5, 3, in: months),
            let shortYear = number(b, comma + 9, 2)
        else { return nil }
        let current = 1970 + Int(now.timeIntervalSince1970 / (365.2425 * 86_400))
        var year = (current / 100) * 100 + shortYear
        if year > current + 50 { year -= 100 }
        return make(year: year, month: month + 1, day: day, clock: b, at: comma + 12)
    }

    /// Combines a date with the `HH:MM:SS` at `b[at...]`.
    private static func make(year: Int, month: Int, day: Int, clock b: [UInt8], at start: Int) -> Date? {
        guard b[start + 2] == 0x3A, b[start + 5] == 0x3A,
            let hour = number(b, start, 2), let minute = number(b, start + 3, 2), let second = number(b, start + 6, 2),
            year >= 1970, (1...CivilCalendar.daysInMonth(year: year, month: month)).contains(day),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }
        let days = CivilCalendar.dayNumber(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * CivilCalendar.secondsPerDay + hour * 3600 + minute * 60 + second))
    }

    private static func number(_ b: [UInt8], _ start: Int, _ count: Int) -> Int? {
        var value = 0
        for index in start..<(start + count) {
            guard b[index] >= 0x30, b[index] <= 0x39 else { return nil }
            value = value * 10 + Int(b[index] - 0x30)
        }
        return value
    }

    /// The index in `names` (lower-case) of the `count` letters at `start`, ignoring ASCII case
    /// (byte-wise, no allocation: this runs on every cache lookup).
    private static func name(_ b: [UInt8], _ start: Int, _ count: Int, in names: [String]) -> Int? {
        guard count > 0, start + count <= b.count else { return nil }
        return names.firstIndex { candidate in
            guard candidate.utf8.count == count else { return false }
            var index = start
            for expected in candidate.utf8 {
                let byte = b[index]
                if (byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte) != expected { return false }
                index += 1
            }
            return true
        }
    }
}
