import Foundation

/// Parsing and formatting of ISO 8601 / RFC 3339 timestamps without shared
/// formatter objects.
///
/// All work is done on the string's UTF-8 bytes with integer calendar
/// arithmetic (proleptic Gregorian, UTC), so every member is pure, reentrant
/// and safe to call from any thread or task. No `DateFormatter` or
/// `ISO8601DateFormatter` is involved, which also avoids their platform
/// differences (notably the limited fractional-second precision of
/// `ISO8601DateFormatter.Options.withFractionalSeconds`).
///
/// This type handles the profile used by JSON APIs (RFC 3339 §5.6 plus a few
/// common relaxations, listed on ``date(from:)``). It is not meant for
/// HTTP-date header values (RFC 9110 §5.6.7), which use a different format.
package enum ISO8601Parsing {
    /// A human-readable list of the formats accepted by ``date(from:)``,
    /// used in error messages.
    package static let acceptedFormatsDescription =
        "yyyy-MM-dd'T'HH:mm:ss[.fraction](Z|±HH:mm|±HHmm|±HH) or yyyy-MM-dd"

    /// Parses an ISO 8601 / RFC 3339 timestamp.
    ///
    /// Accepted shapes (the whole string must match; no surrounding whitespace):
    /// - `2026-05-25T22:46:27Z` — RFC 3339 `date-time`, UTC.
    /// - `2026-05-25T22:46:27.580497Z` — with a fraction of one or more digits;
    ///   digits up to nanoseconds are honoured, further digits are ignored.
    ///   The fraction is added as an exact decimal, so microsecond values
    ///   survive (to within `Date`'s `Double` resolution, well below 1 µs
    ///   for present-day dates).
    /// - `2026-05-25T22:46:27+02:00`, `-05:30`, `+0200`, `+02` — numeric UTC
    ///   offsets (hours 00–23, minutes 00–59). The result is the same instant
    ///   in UTC, e.g. `…22:46:27+02:00` equals `…20:46:27Z`.
    /// - `2026-05-25` — a full date alone (RFC 3339 `full-date`), interpreted
    ///   as midnight UTC of that day.
    ///
    /// Per RFC 3339 §5.6 the `T` and `Z` may also be lowercase, and a single
    /// space may separate date and time. Years are exactly four digits
    /// (0000–9999); a time without a zone designator is rejected because it
    /// names no single instant; a leap second (`:60`) is rejected because
    /// `Date` cannot represent it.
    ///
    /// - Parameter string: The timestamp text.
    /// - Returns: The instant, or `nil` if `string` is not in an accepted
    ///   shape or names an impossible date or time (e.g. `2026-02-30`).
    package static func date(from string: String) -> Date? {
        date(from: string, zonelessOffset: nil)
    }

    /// ``date(from:)``, but a date-time without a zone designator is read at `zonelessOffset`
    /// seconds east of UTC (0 for UTC) instead of being rejected.
    static func date(from string: String, zonelessOffset: Int?) -> Date? {
        var scanner = ByteScanner(string)
        guard let parsed = scanner.scanTimestamp(zonelessOffset: zonelessOffset), scanner.isAtEnd else { return nil }
        let dayNumber = CivilCalendar.dayNumber(year: parsed.year, month: parsed.month, day: parsed.day)
        let unixSeconds =
            dayNumber * CivilCalendar.secondsPerDay
            + parsed.hour * 3_600 + parsed.minute * 60 + parsed.second
            - parsed.offsetSeconds
        let referenceSeconds = unixSeconds - CivilCalendar.unixToReferenceDateOffset
        let fraction = Double(parsed.nanoseconds) / 1_000_000_000
        return Date(timeIntervalSinceReferenceDate: Double(referenceSeconds) + fraction)
    }
}

/// The fields of a parsed timestamp, before conversion to an instant.
struct ParsedTimestamp: Equatable {
    var year: Int
    var month: Int
    var day: Int
    var hour = 0
    var minute = 0
    var second = 0
    var nanoseconds = 0
    /// Offset of the local time from UTC, in seconds (east positive).
    var offsetSeconds = 0
}
