import Foundation

/// A `Date` property coded in its own ``DateCodingFormat``, whatever date strategy the client's
/// `JSONDecoder`/`JSONEncoder` uses: one property in milliseconds in an API that otherwise sends
/// ISO 8601.
///
/// ```swift
/// struct Order: Codable {
///     var placedAt: Date                                                 // the client's strategy
///     @CodedDate<DateCoding.MillisecondsSince1970> var paidAt: Date      // 1767225600000
/// }
/// ```
///
/// A value that is no date in the format fails decoding with a `DecodingError` whose coding path
/// names the property (``NetworkError/decoding(_:)`` from a call). For a property that may be
/// `null` or absent, use ``CodedOptionalDate``.
@propertyWrapper
public struct CodedDate<Format: DateCodingFormat>: Codable, Sendable, Hashable {
    /// The date.
    public var wrappedValue: Date

    /// Wraps `wrappedValue`.
    public init(wrappedValue: Date) {
        self.wrappedValue = wrappedValue
    }

    /// Reads the date in `Format`.
    ///
    /// - Throws: The `DecodingError` of `Format` (see ``DateCodingFormat/decode(from:)``).
    public init(from decoder: any Decoder) throws {
        wrappedValue = try Format.decode(from: decoder.singleValueContainer())
    }

    /// Writes the date in `Format`.
    ///
    /// - Throws: The `EncodingError` of `Format`.
    public func encode(to encoder: any Encoder) throws {
        var container: any SingleValueEncodingContainer = encoder.singleValueContainer()
        try Format.encode(wrappedValue, to: &container)
    }
}

/// An optional `Date` property coded in its own ``DateCodingFormat``: `null` and an absent key
/// decode as `nil`; `nil` is encoded as an absent key, as Swift's synthesized `Codable` does for
/// optionals.
///
/// ```swift
/// struct Subscription: Codable {
///     @CodedOptionalDate<DateCoding.SecondsSince1970> var cancelledAt: Date?
/// }
/// ```
@propertyWrapper
public struct CodedOptionalDate<Format: DateCodingFormat>: Codable, Sendable, Hashable {
    /// The date, or `nil`.
    public var wrappedValue: Date?

    /// Wraps `wrappedValue`.
    public init(wrappedValue: Date?) {
        self.wrappedValue = wrappedValue
    }

    /// Reads `null` as `nil`, anything else as a date in `Format`.
    ///
    /// - Throws: The `DecodingError` of `Format` for a value that is neither `null` nor a date.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : try Format.decode(from: container)
    }

    /// Writes `null` for `nil` (a keyed container leaves the key out instead), the date in
    /// `Format` otherwise.
    ///
    /// - Throws: The `EncodingError` of `Format`.
    public func encode(to encoder: any Encoder) throws {
        var container: any SingleValueEncodingContainer = encoder.singleValueContainer()
        guard let wrappedValue else {
            try container.encodeNil()
            return
        }
        try Format.encode(wrappedValue, to: &container)
    }
}

extension KeyedDecodingContainer {
    /// An absent key decodes a ``CodedOptionalDate`` as `nil` (called by synthesized `Codable`).
    ///
    /// - Throws: The `DecodingError` of the format for a present value that is no date.
    public func decode<Format>(_ type: CodedOptionalDate<Format>.Type, forKey key: Key) throws -> CodedOptionalDate<Format> {
        try decodeIfPresent(type, forKey: key) ?? CodedOptionalDate(wrappedValue: nil)
    }
}

extension KeyedEncodingContainer {
    /// A `nil` ``CodedOptionalDate`` leaves its key out (called by synthesized `Codable`).
    ///
    /// - Throws: The `EncodingError` of the format.
    public mutating func encode<Format>(_ value: CodedOptionalDate<Format>, forKey key: Key) throws {
        guard value.wrappedValue != nil else { return }
        try encodeIfPresent(value, forKey: key)
    }
}
