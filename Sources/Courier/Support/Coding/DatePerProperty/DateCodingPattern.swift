import Foundation

/// A ``DateCodingFormat`` from a `DateFormatter` pattern (Unicode TR35), for a property in a shape of
/// its own: `"25.05.2026"`, `"2026-05-25 22:46"`. Name the pattern; the time zone is UTC and the
/// locale `en_US_POSIX` unless you say otherwise.
///
/// ```swift
/// enum DayMonthYear: DateCodingPattern {
///     static let pattern = "dd.MM.yyyy"
/// }
///
/// struct Passport: Codable {
///     @CodedDate<DayMonthYear> var issuedOn: Date   // "25.05.2026"
/// }
/// ```
///
/// A formatter is made for each value (`DateFormatter` is not safe to share between threads on
/// every platform): fine for a few properties per response, not for tens of thousands of rows.
public protocol DateCodingPattern: DateCodingFormat {
    /// The `DateFormatter.dateFormat` pattern, e.g. `yyyy-MM-dd`.
    static var pattern: String { get }
    /// The time zone the pattern's fields are in; UTC by default.
    static var timeZone: TimeZone { get }
}

extension DateCodingPattern {
    /// UTC.
    public static var timeZone: TimeZone { TimeZone(identifier: "UTC") ?? TimeZone(secondsFromGMT: 0) ?? .current }

    /// Reads a string in ``pattern``.
    ///
    /// - Throws: `DecodingError.typeMismatch` for a non-string, `.dataCorrupted` (naming the
    ///   pattern) for a string that does not match it.
    public static func decode(from container: any SingleValueDecodingContainer) throws -> Date {
        let text = try DateCoding.decode(String.self, from: container, expected: "a date string \"\(pattern)\"")
        guard let date = formatter().date(from: text) else {
            throw DecodingError.dataCorruptedError(
                in: container, debugDescription: "Invalid date \"\(text)\"; expected the pattern \"\(pattern)\"")
        }
        return date
    }

    /// Writes `date` in ``pattern``.
    public static func encode(_ date: Date, to container: inout any SingleValueEncodingContainer) throws {
        try container.encode(formatter().string(from: date))
    }

    private static func formatter() -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.calendar = Calendar(identifier: .gregorian)
        formatter.timeZone = timeZone
        formatter.dateFormat = pattern
        formatter.isLenient = false
        return formatter
    }
}
