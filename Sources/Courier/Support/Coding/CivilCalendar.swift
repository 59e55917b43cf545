/// Proleptic Gregorian calendar arithmetic on plain integers, used by the
/// ISO 8601 parser and formatter so that neither needs a shared, non-Sendable
/// `Calendar`, `DateFormatter` or `ISO8601DateFormatter`.
///
/// Day numbers count days since 1970-01-01 (day 0). The conversions follow the
/// well-known era/day-of-era decomposition of the 400-year Gregorian cycle and
/// are exact for every year representable in `Int`.
enum CivilCalendar {
    /// Seconds in one civil (UTC) day, ignoring leap seconds as POSIX time does.
    static let secondsPerDay = 86_400

    /// Difference, in seconds, between the Unix epoch (1970-01-01T00:00:00Z)
    /// and Foundation's reference date (2001-01-01T00:00:00Z).
    static let unixToReferenceDateOffset = 978_307_200

    /// Whether `year` is a leap year in the proleptic Gregorian calendar.
    static func isLeapYear(_ year: Int) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    /// Number of days in `month` (1–12) of `year`; 0 for an invalid month.
    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 1, 3, 5, 7, 8, 10, 12: return 31
        case 4, 6, 9, 11: return 30
        case 2: return isLeapYear(year) ? 29 : 28
        default: return 0
        }
    }

    /// Days since 1970-01-01 for a valid civil date (month 1–12, day 1–31).
    static func dayNumber(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = floorDivide(shiftedYear, 400)
        let yearOfEra = shiftedYear - era * 400
        let monthFromMarch = (month + 9) % 12
        let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date for a day number (days since 1970-01-01).
    static func civilDate(dayNumber: Int) -> (year: Int, month: Int, day: Int) {
        let shifted = dayNumber + 719_468
        let era = floorDivide(shifted, 146_097)
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    /// Integer division rounding toward negative infinity.
    static func floorDivide(_ dividend: Int, _ divisor: Int) -> Int {
        let quotient = dividend / divisor
        return (dividend % divisor != 0 && (dividend < 0) != (divisor < 0)) ? quotient - 1 : quotient
    }
}
