import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an endpoint's ``Endpoint/decode(_:context:)`` gets besides the response: the request method
/// and the decoder to use.
public struct ResponseDecodingContext: Sendable {
    /// The request method (a HEAD response never has a body).
    public let method: HTTPMethod
    /// The client's decoder, or the request's override.
    public let decoder: JSONDecoder

    /// Creates a context.
    public init(method: HTTPMethod, decoder: JSONDecoder) {
        self.method = method
        self.decoder = decoder
    }

    /// Whether `response` has no content: status 204 or 205 (RFC 9110 §15.3.5–6), a HEAD request,
    /// or a zero-length body.
    public func hasNoContent(_ response: HTTPResponse) -> Bool {
        response.statusCode == 204 || response.statusCode == 205 || method == .head || response.data.isEmpty
    }

    /// Decodes `type` from the JSON body of `response`.
    ///
    /// `Data` is the raw body bytes, never JSON-decoded. `String` is the body as text in its
    /// charset (``HTTPResponse/text()``), unless the response is JSON (`application/json` or
    /// `+json`), whose string value is decoded. An empty body (see ``hasNoContent(_:)``) yields
    /// `nil` for an `Optional` type and ``EmptyResponse`` for that type; any other type throws
    /// ``EmptyBodyError`` — a clear message instead of a JSON syntax error. One leading UTF-8
    /// byte-order mark is ignored. A number that does not fit its type (e.g. `9223372036854775808`
    /// into an `Int64`) is reported with its key path (`DecodingError.dataCorrupted`), never as
    /// invalid JSON when the body parses.
    /// - Throws: ``EmptyBodyError``, ``TextDecodingError`` (a `String` in an unknown charset), or
    ///   the decoder's `DecodingError`.
    public func decodeJSON<T: Decodable>(_ type: T.Type, from response: HTTPResponse) throws -> T {
        if hasNoContent(response) {
            if let optional = T.self as? any OptionalMarker.Type, let none = optional.noneValue as? T { return none }
            if let empty = EmptyResponse() as? T { return empty }
            if let bytes = Data() as? T { return bytes }
            throw EmptyBodyError()
        }
        if let bytes = response.data as? T { return bytes }
        if T.self == String.self || T.self == String?.self, !(response.mediaType.map(Self.isJSON) ?? false),
            let text = try response.text() as? T
        {
            return text
        }
        var body = response.data
        if body.starts(with: [0xEF, 0xBB, 0xBF]) { body = body.dropFirst(3) }
        do {
            return try decoder.decode(T.self, from: body)
        } catch {
            throw JSONNumberDiagnosis.diagnose(error, decoding: T.self, from: body, with: decoder) ?? error
        }
    }

    /// `application/json` or any `+json` media type (RFC 6839 §3.1).
    private static func isJSON(_ mediaType: String) -> Bool {
        mediaType == "application/json" || mediaType.hasSuffix("+json")
    }
}
