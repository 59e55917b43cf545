import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Parses and formats HTTP-dates (RFC 9110 §5.6.7).
///
/// Senders must use IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`); recipients must also accept the
/// obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`) and ANSI C `asctime()` form
/// (`Sun Nov  6 08:49:37 1994`). The parser is hand-written: no shared `DateFormatter`, so it is
/// thread-safe and allocation-light.
package enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The instant an HTTP-date names, or `nil` when `text` is in none of the three formats.
    package static func parse(_ text: String) -> Date? {
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        if tokens.count == 6, tokens[5].uppercased() == "GMT" {
            // IMF-fixdate: Sun 06 Nov 1994 08:49:37 GMT
            return make(day: tokens[1], month: tokens[2], year: tokens[3], time: tokens[4])
        }
        if tokens.count == 4, tokens[3].uppercased() == "GMT" {
            // RFC 850: Sunday 06-Nov-94 08:49:37 GMT
            let parts = tokens[1].split(separator: "-").map(String.init)
            guard parts.count == 3, var year = Int(parts[2]) else { return nil }
            if parts[2].count == 2 {
                // RFC 9110 §5.6.7: a two-digit year more than 50 years in the future is in the past century.
                let current = Calendar(identifier: .gregorian).component(.year, from: Date())
                year += 2000
                if year > current + 50 { year -= 100 }
            }
            return make(day: parts[0], month: parts[1], year: String(year), time: tokens[2])
        }
        if tokens.count == 5 {
            // asctime: Sun Nov 6 08:49:37 1994
            return make(day: tokens[2], month: tokens[1], year: tokens[4], time: tokens[3])
        }
        return nil
    }

    /// `date` as an IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
    package static func string(from date: Date) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT") ?? calendar.timeZone
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second, .weekday], from: date)
        let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let weekday = weekdays[((c.weekday ?? 1) - 1) % 7]
        let month = monthNames[((c.month ?? 1) - 1) % 12]
        func two(_ n: Int?) -> String {
            let v = n ?? 0
            return v < 10 ? "0\(v)" : "\(v)"
        }
        return "\(weekday), \(two(c.day)) \(month) \(c.year ?? 1970) \(two(c.hour)):\(two(c.minute)):\(two(c.second)) GMT"
    }

    private static func make(day: String, month: String, year: String, time: String) -> Date? {
        // An impossible day (31 Feb) is refused, not carried into the next month; a year has four
        // digits (RFC 9110 §5.6.7).
        guard let d = Int(day), let y = Int(year), (1970...9999).contains(y),
            let m = months.firstIndex(of: month.lowercased()),
            (1...CivilCalendar.daysInMonth(year: y, month: m + 1)).contains(d)
        else { return nil }
        let hms = time.split(separator: ":").compactMap { Int($0) }
        guard hms.count == 3, (0...23).contains(hms[0]), (0...59).contains(hms[1]), (0...60).contains(hms[2])
        else { return nil }
        let days = CivilCalendar.dayNumber(year: y, month: m + 1, day: d)
        let seconds = days * CivilCalendar.secondsPerDay + hms[0] * 3600 + hms[1] * 60 + hms[2]
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
