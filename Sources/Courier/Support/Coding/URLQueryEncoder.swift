import Foundation

/// Encodes an `Encodable` value into URL query items, using a real
/// `Encoder` implementation (no JSON round trip).
///
/// Shapes (for `arrayEncoding: .repeated`, the default):
/// - The top-level value must encode as a keyed container (a struct, class
///   or `[String: …]` dictionary); anything else throws.
/// - Scalars become `name=value`: strings verbatim, integers in decimal,
///   floating-point numbers in Swift's shortest round-tripping form
///   (`1.5`, `0.1`), `Bool` per ``boolEncoding``, `Date` per
///   ``dateEncoding``, `URL` as its absolute string, `Decimal` in decimal,
///   `Data` as Base64 (RFC 4648 §4), and other single-value types (such as
///   `UUID` or `RawRepresentable` enums) by their own encoding.
/// - `nil` values, empty arrays and empty nested objects are omitted.
/// - Nested objects use brackets: `filter[status]=open`,
///   `a[b][c]=d`.
/// - Arrays follow ``arrayEncoding``; they may hold only scalars.
/// - Items are sorted by key (Swift `String` ordering) at every nesting
///   level; array elements keep their order. The same input therefore
///   always yields the same items in the same order.
///
/// Values are not percent-encoded here; that happens when the items are
/// rendered, e.g. by `PercentEncoding.query(from:)`.
public struct URLQueryEncoder: Sendable {
    /// How arrays are written. Default ``ArrayEncoding/repeated``.
    public var arrayEncoding: ArrayEncoding
    /// How booleans are written. Default ``BoolEncoding/literal``.
    public var boolEncoding: BoolEncoding
    /// How dates are written. Default ``DateEncoding/iso8601``.
    public var dateEncoding: DateEncoding
    /// Contextual information exposed to `encode(to:)` implementations as
    /// `Encoder.userInfo`.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Creates an encoder with the given options.
    public init(
        arrayEncoding: ArrayEncoding = .repeated,
        boolEncoding: BoolEncoding = .literal,
        dateEncoding: DateEncoding = .iso8601,
        userInfo: [CodingUserInfoKey: any Sendable] = [:]
    ) {
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dateEncoding = dateEncoding
        self.userInfo = userInfo
    }

    /// Encodes `value` into query items, sorted by key.
    ///
    /// - Parameter value: A value that encodes as a keyed container.
    /// - Returns: The items; empty when every property is `nil` or empty.
    /// - Throws: `EncodingError.invalidValue` when the top-level value is not
    ///   keyed (a scalar or array), an array contains an object or another
    ///   array, a floating-point value is NaN or infinite, a date cannot be
    ///   represented, or a value writes conflicting containers; any error
    ///   thrown by the value's own `encode(to:)` or a ``DateEncoding/custom(_:)``
    ///   closure.
    public func encode(_ value: some Encodable) throws -> [URLQueryItem] {
        let context = QueryEncodingContext(encoder: self)
        let root = try context.box(value, codingPath: [])
        switch root.kind {
        case .keyed, .empty: break
        default:
            throw EncodingError.invalidValue(
                value,
                EncodingError.Context(
                    codingPath: [],
                    debugDescription: "URLQueryEncoder needs a keyed top-level value (a struct or "
                        + "[String: …] dictionary); got \(root.kind.name)"
                )
            )
        }
        var flattener = QueryFlattener(arrayEncoding: arrayEncoding)
        try flattener.flatten(root, name: "")
        return flattener.items
    }
}
