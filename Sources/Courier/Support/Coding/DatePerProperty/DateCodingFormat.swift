import Foundation

/// How one `Date` property is written in JSON, whatever the client's date strategy: the format a
/// ``CodedDate`` or ``CodedOptionalDate`` property wrapper uses.
///
/// Courier ships the common ones in ``DateCoding``: seconds or milliseconds since 1970 and
/// RFC 3339 / ISO 8601 strings with or without fractional seconds; ``DateCodingPattern`` adds a
/// `DateFormatter` pattern. Conform a type of your own for anything else.
///
/// ```swift
/// enum UnixMinutes: DateCodingFormat {
///     static func decode(from container: any SingleValueDecodingContainer) throws -> Date {
///         Date(timeIntervalSince1970: try container.decode(Double.self) * 60)
///     }
///     static func encode(_ date: Date, to container: inout any SingleValueEncodingContainer) throws {
///         try container.encode(date.timeIntervalSince1970 / 60)
///     }
/// }
/// ```
public protocol DateCodingFormat: Sendable {
    /// Reads a date from the property's value.
    ///
    /// - Throws: `DecodingError.typeMismatch` for a value of the wrong JSON type,
    ///   `DecodingError.dataCorrupted` (naming the expected format) for a value that is no date.
    static func decode(from container: any SingleValueDecodingContainer) throws -> Date

    /// Writes `date` as the property's value.
    ///
    /// - Throws: `EncodingError.invalidValue` for a date the format cannot express.
    static func encode(_ date: Date, to container: inout any SingleValueEncodingContainer) throws
}

/// The date formats a ``CodedDate`` property can use.
///
/// ```swift
/// struct Event: Codable {
///     @CodedDate<DateCoding.MillisecondsSince1970> var createdAt: Date   // 1767225600000
///     @CodedDate<DateCoding.ISO8601> var startsAt: Date                  // "2026-01-01T00:00:00Z"
///     @CodedOptionalDate<DateCoding.SecondsSince1970> var endedAt: Date? // 1767225600, null or absent
/// }
/// ```
public enum DateCoding {
    /// Seconds since 1970-01-01T00:00:00Z as a JSON number (Unix time), fractions allowed. Encodes
    /// a whole number when the date has no fraction of a second.
    public enum SecondsSince1970: DateCodingFormat {
        /// Reads a JSON number of seconds.
        ///
        /// - Throws: `DecodingError.typeMismatch` for a non-number, `.dataCorrupted` for a
        ///   non-finite one.
        public static func decode(from container: any SingleValueDecodingContainer) throws -> Date {
            Date(timeIntervalSince1970: try DateCoding.number(from: container, unit: "seconds since 1970"))
        }

        /// Writes the date's seconds since 1970.
        public static func encode(_ date: Date, to container: inout any SingleValueEncodingContainer) throws {
            let seconds = date.timeIntervalSince1970
            if seconds.rounded() == seconds, let whole = Int64(exactly: seconds) {
                try container.encode(whole)
            } else {
                try container.encode(seconds)
            }
        }
    }

    /// Milliseconds since 1970-01-01T00:00:00Z as a JSON number (JavaScript's `Date.now()`).
    /// Encodes a whole number of milliseconds (rounded).
    public enum MillisecondsSince1970: DateCodingFormat {
        /// Reads a JSON number of milliseconds.
        ///
        /// - Throws: `DecodingError.typeMismatch` for a non-number, `.dataCorrupted` for a
        ///   non-finite one.
        public static func decode(from container: any SingleValueDecodingContainer) throws -> Date {
            if let whole = try? container.decode(Int64.self) {
                return Date(timeIntervalSince1970: Double(whole / 1000) + Double(whole % 1000) / 1000)
            }
            return Date(timeIntervalSince1970: try DateCoding.number(from: container, unit: "milliseconds since 1970") / 1000)
        }

        /// Writes the date's milliseconds since 1970, rounded to a whole number.
        ///
        /// - Throws: `EncodingError.invalidValue` for a date too far out for a 64-bit count.
        public static func encode(_ date: Date, to container: inout any SingleValueEncodingContainer) throws {
            guard let milliseconds = Int64(exactly: (date.timeIntervalSince1970 * 1000).rounded()) else {
                throw EncodingError.invalidValue(
                    date,
                    EncodingError.Context(
                        codingPath: container.codingPath, debugDescription: "Date is out of range for milliseconds since 1970"))
            }
            try container.encode(milliseconds)
        }
    }

    /// An RFC 3339 / ISO 8601 string without fractional seconds, `2026-05-25T22:46:27Z` (UTC).
    /// Reads every shape `JSONDecoder.DateDecodingStrategy.flexibleISO8601` reads,
    /// with or without fractional seconds and with any offset.
    public enum ISO8601: DateCodingFormat {
        /// Reads an ISO 8601 string.
        ///
        /// - Throws: `DecodingError.typeMismatch` for a non-string, `.dataCorrupted` (naming
        ///   the accepted shapes) for a string that is no timestamp.
        public static func decode(from container: any SingleValueDecodingContainer) throws -> Date {
            try DateCoding.iso8601(from: container)
        }

        /// Writes `2026-05-25T22:46:27Z` (fractions of a second are dropped).
        ///
        /// - Throws: `EncodingError.invalidValue` outside years 0000–9999.
        public static func encode(_ date: Date, to container: inout any SingleValueEncodingContainer) throws {
            try DateCoding.encodeISO8601(date, fractionalDigits: 0, to: &container)
        }
    }

    /// An RFC 3339 / ISO 8601 string with milliseconds, `2026-05-25T22:46:27.580Z` (UTC, the shape of
    /// JavaScript's `toISOString()`). Reads the same shapes as ``ISO8601``.
    public enum ISO8601WithFractionalSeconds: DateCodingFormat {
        /// Reads an ISO 8601 string.
        ///
        /// - Throws: As ``DateCoding/ISO8601/decode(from:)``.
        public static func decode(from container: any SingleValueDecodingContainer) throws -> Date {
            try DateCoding.iso8601(from: container)
        }

        /// Writes `2026-05-25T22:46:27.580Z`.
        ///
        /// - Throws: `EncodingError.invalidValue` outside years 0000–9999.
        public static func encode(_ date: Date, to container: inout any SingleValueEncodingContainer) throws {
            try DateCoding.encodeISO8601(date, fractionalDigits: 3, to: &container)
        }
    }

    /// Decodes the container's `T`; a value of another type fails with `typeMismatch` whose
    /// description reads "Expected \(expected)".
    static func decode<T: Decodable>(
        _ type: T.Type, from container: any SingleValueDecodingContainer, expected: @autoclosure () -> String
    ) throws -> T {
        do {
            return try container.decode(T.self)
        } catch DecodingError.typeMismatch(_, let context) {
            throw DecodingError.typeMismatch(
                T.self, DecodingError.Context(codingPath: context.codingPath, debugDescription: "Expected \(expected())"))
        }
    }

    static func number(from container: any SingleValueDecodingContainer, unit: String) throws -> Double {
        let value = try decode(Double.self, from: container, expected: "a date as a number of \(unit)")
        guard value.isFinite else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "Expected a finite number of \(unit)")
        }
        return value
    }

    static func iso8601(from container: any SingleValueDecodingContainer) throws -> Date {
        let text = try decode(String.self, from: container, expected: "an ISO 8601 date string")
        guard let date = ISO8601Parsing.date(from: text) else {
            throw DecodingError.dataCorruptedError(
                in: container,
                debugDescription: "Invalid ISO 8601 date \"\(text)\"; expected " + ISO8601Parsing.acceptedFormatsDescription)
        }
        return date
    }

    static func encodeISO8601(
        _ date: Date, fractionalDigits: Int, to container: inout any SingleValueEncodingContainer
    ) throws {
        let text = try ISO8601Parsing.encodedString(
            from: date, fractionalDigits: fractionalDigits, codingPath: container.codingPath)
        try container.encode(text)
    }
}
