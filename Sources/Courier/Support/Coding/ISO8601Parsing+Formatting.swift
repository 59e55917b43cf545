import Foundation

extension ISO8601Parsing {
    /// Formats an instant as an RFC 3339 `date-time` in UTC, e.g.
    /// `2026-05-25T22:46:27.580Z` for `fractionalDigits: 3`.
    ///
    /// The output always uses `T`, `Z`, a four-digit year and, when
    /// `fractionalDigits > 0`, a `.` followed by exactly that many digits.
    /// The fraction is truncated to `fractionalDigits`, as
    /// `ISO8601DateFormatter` truncates (`…27.580497` gives `…27.580` with 3
    /// digits and `…27` with 0), except that a value within a few units in
    /// the last place of `Date`'s `Double` below the next unit is taken as
    /// that unit, so binary floating-point noise never turns `.580` into
    /// `.579`. Output round-trips through ``date(from:)``.
    ///
    /// - Parameters:
    ///   - date: The instant to format.
    ///   - fractionalDigits: Digits of fractional seconds, clamped to 0…9.
    ///     0 omits the fraction. Digits beyond `Date`'s resolution (about
    ///     0.1 µs for present-day dates) show binary representation noise,
    ///     so 6 is the most that round-trips decimal input exactly.
    /// - Returns: The timestamp text, or `nil` when the instant is not finite
    ///   or falls outside years 0000–9999 (not representable in the
    ///   four-digit RFC 3339 profile).
    package static func string(from date: Date, fractionalDigits: Int = 3) -> String? {
        let digits = min(max(fractionalDigits, 0), 9)
        let reference = date.timeIntervalSinceReferenceDate
        // ±4e11 s comfortably covers years 0000–9999 and keeps Int conversion safe.
        guard reference.isFinite, abs(reference) < 4e11 else { return nil }
        let wholeSeconds = reference.rounded(.down)
        let scale = powerOfTen(digits)
        let scaledFraction = (reference - wholeSeconds) * Double(scale)
        var fractionUnits = Int(scaledFraction.rounded(.down))
        // Values within a few ulps below the next unit are that unit plus
        // floating-point noise (e.g. a parsed `.58` stored as `.57999999…`).
        let noise = 4 * reference.ulp * Double(scale)
        if Double(fractionUnits + 1) - scaledFraction <= noise {
            fractionUnits += 1
        }
        var unixSeconds = Int(wholeSeconds) + CivilCalendar.unixToReferenceDateOffset
        if fractionUnits >= scale {
            fractionUnits -= scale
            unixSeconds += 1
        }
        let dayNumber = CivilCalendar.floorDivide(unixSeconds, CivilCalendar.secondsPerDay)
        let secondOfDay = unixSeconds - dayNumber * CivilCalendar.secondsPerDay
        let civil = CivilCalendar.civilDate(dayNumber: dayNumber)
        guard (0...9_999).contains(civil.year) else { return nil }

        var text = padded(civil.year, 4) + "-" + padded(civil.month, 2) + "-" + padded(civil.day, 2)
        text += "T" + padded(secondOfDay / 3_600, 2) + ":" + padded(secondOfDay % 3_600 / 60, 2)
        text += ":" + padded(secondOfDay % 60, 2)
        if digits > 0 {
            text += "." + padded(fractionUnits, digits)
        }
        return text + "Z"
    }

    /// ``string(from:fractionalDigits:)`` for an encoder: the text, or the `EncodingError` that
    /// says the instant cannot be written.
    ///
    /// - Parameter codingPath: Where the date is being encoded.
    /// - Throws: `EncodingError.invalidValue` for dates outside years 0000–9999 or non-finite dates.
    static func encodedString(from date: Date, fractionalDigits: Int, codingPath: [any CodingKey]) throws -> String {
        guard let text = string(from: date, fractionalDigits: fractionalDigits) else {
            throw EncodingError.invalidValue(
                date,
                EncodingError.Context(
                    codingPath: codingPath,
                    debugDescription: "Date \(date.timeIntervalSince1970) s since 1970 is outside "
                        + "the RFC 3339 range 0000-01-01…9999-12-31"))
        }
        return text
    }

    /// 10 raised to `exponent` (0…9).
    private static func powerOfTen(_ exponent: Int) -> Int {
        var result = 1
        for _ in 0..<exponent { result *= 10 }
        return result
    }

    /// Decimal representation of a non-negative `value`, left-padded with
    /// zeros to at least `width` characters.
    private static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
