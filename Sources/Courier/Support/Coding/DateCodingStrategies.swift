import Foundation

extension JSONDecoder.DateDecodingStrategy {
    /// Decodes dates from ISO 8601 / RFC 3339 strings in any of the shapes
    /// accepted by `ISO8601Parsing.date(from:)`: `2026-05-25T22:46:27Z`,
    /// fractional seconds of any length (`…27.580497Z`), numeric offsets
    /// (`+02:00`, `-05:30`, `+0200`) and date-only `2026-05-25` (midnight UTC).
    ///
    /// This is a `.custom` strategy backed by a pure parser, so it is safe to
    /// use from any number of decoders concurrently.
    ///
    /// - Throws: `DecodingError.typeMismatch` if the value is not a string, and
    ///   `DecodingError.dataCorrupted` (naming the accepted formats) if the
    ///   string is not a valid timestamp.
    public static var flexibleISO8601: Self { flexibleISO8601(zonelessOffset: nil) }

    /// ``flexibleISO8601``, and a date-time without a zone designator (`2026-05-25T22:46:27`,
    /// which RFC 3339 does not allow) is read as UTC — for servers the app knows to send UTC
    /// without saying so. Everything else is as for ``flexibleISO8601``.
    ///
    /// - Throws: As ``flexibleISO8601``.
    public static var flexibleISO8601AssumingUTC: Self { flexibleISO8601(zonelessOffset: 0) }

    private static func flexibleISO8601(zonelessOffset: Int?) -> Self {
        .custom { decoder in
            let container = try decoder.singleValueContainer()
            let text = try container.decode(String.self)
            guard let date = ISO8601Parsing.date(from: text, zonelessOffset: zonelessOffset) else {
                throw DecodingError.dataCorruptedError(
                    in: container,
                    debugDescription: "Invalid ISO 8601 date \"\(text)\"; expected "
                        + ISO8601Parsing.acceptedFormatsDescription
                )
            }
            return date
        }
    }
}

extension JSONEncoder.DateEncodingStrategy {
    /// Encodes dates as RFC 3339 UTC strings with millisecond precision,
    /// e.g. `2026-05-25T22:46:27.580Z` (the shape of JavaScript's
    /// `Date.toISOString()`). Decodable with
    /// `JSONDecoder.DateDecodingStrategy.flexibleISO8601`.
    ///
    /// - Throws: `EncodingError.invalidValue` for dates outside years
    ///   0000–9999 or non-finite dates.
    public static var iso8601WithFractionalSeconds: Self {
        iso8601(fractionalDigits: 3)
    }

    /// Encodes dates as RFC 3339 UTC strings with exactly `fractionalDigits`
    /// digits of fractional seconds (clamped to 0…9), e.g. 6 gives
    /// `2026-05-25T22:46:27.580497Z`. See
    /// `ISO8601Parsing.string(from:fractionalDigits:)`.
    ///
    /// - Throws: `EncodingError.invalidValue` for dates outside years
    ///   0000–9999 or non-finite dates.
    public static func iso8601(fractionalDigits: Int) -> Self {
        .custom { date, encoder in
            let text = try ISO8601Parsing.encodedString(
                from: date, fractionalDigits: fractionalDigits, codingPath: encoder.codingPath)
            var container = encoder.singleValueContainer()
            try container.encode(text)
        }
    }
}
