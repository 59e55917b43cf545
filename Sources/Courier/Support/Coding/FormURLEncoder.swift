import Foundation

/// Encodes request bodies of media type `application/x-www-form-urlencoded`
/// (WHATWG URL Standard §5, "application/x-www-form-urlencoded").
///
/// Values are flattened exactly as by ``URLQueryEncoder`` (sorted keys,
/// `nil` omitted, `a[b]=c` nesting, the configured array, bool and date
/// options) and serialised as `name=value` pairs joined by `&`, with names
/// and values escaped by `PercentEncoding.encodeQueryComponent(_:)`.
///
/// Serialisation choice: a space is written as `%20`, not the `+` that the
/// WHATWG serializer (§5.2) and HTML forms emit, so that the body is
/// unambiguous to every parser; `+` is always written as `%2B`. Likewise
/// only RFC 3986 unreserved bytes are left as is (WHATWG would leave `*`
/// and escape `~`). The WHATWG parser (§5.1) percent-decodes all of these,
/// so a conforming server reads back exactly the original names and values.
/// Output is UTF-8 and contains only ASCII bytes.
public struct FormURLEncoder: Sendable {
    /// The `Content-Type` header value for bodies produced by this type.
    /// The media type defines no `charset` parameter; the body is ASCII.
    package static let contentType = "application/x-www-form-urlencoded"

    /// The encoder used to flatten `Encodable` values into name/value pairs.
    package var queryEncoder: URLQueryEncoder

    /// Creates a form encoder.
    ///
    /// - Parameter queryEncoder: Options for flattening values; defaults to
    ///   `URLQueryEncoder()` (repeated array keys, `true`/`false`, RFC 3339
    ///   dates).
    public init(queryEncoder: URLQueryEncoder = URLQueryEncoder()) {
        self.queryEncoder = queryEncoder
    }

    /// Encodes `value` as a form body, e.g. `email=a%2Bb%40c.d&name=Jo%20Ann`.
    ///
    /// - Parameter value: A value that encodes as a keyed container.
    /// - Returns: The body bytes (ASCII); empty when there are no fields.
    /// - Throws: The errors of ``URLQueryEncoder/encode(_:)``, e.g.
    ///   `EncodingError.invalidValue` for a top-level scalar or array.
    public func encode(_ value: some Encodable) throws -> Data {
        encode(try queryEncoder.encode(value))
    }

    /// Encodes pre-built pairs as a form body, in the given order. An item
    /// with a `nil` value is written as its name alone.
    ///
    /// - Parameter items: The fields, in order.
    /// - Returns: The body bytes (ASCII); empty for no items.
    public func encode(_ items: [URLQueryItem]) -> Data {
        Data(PercentEncoding.query(from: items).utf8)
    }
}
