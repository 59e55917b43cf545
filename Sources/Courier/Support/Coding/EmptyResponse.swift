/// A response type for endpoints whose body carries no information, such as
/// `204 No Content` or a `200` with an ignorable body.
///
/// Decoding never reads the value, so it succeeds for any JSON value
/// (`{}`, `[]`, `null`, a string, …). An empty body is not JSON at all; the
/// client is expected to recognise `EmptyResponse` and return
/// ``EmptyResponse/init()`` without invoking a decoder (RFC 9110 §15.3.5:
/// a 204 response has no content).
///
/// Encodes as an empty JSON object, `{}`.
public struct EmptyResponse: Codable, Sendable, Hashable {
    /// The only value.
    public init() {}

    /// Succeeds without reading `decoder`; never throws.
    public init(from decoder: any Decoder) throws {}

    /// Encodes an empty keyed container (`{}` in JSON).
    public func encode(to encoder: any Encoder) throws {
        _ = encoder.container(keyedBy: NoKeys.self)
    }

    private enum NoKeys: CodingKey {}
}
