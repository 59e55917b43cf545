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
        response.statusCode == 204 || response.statusCode == 205 || method == .head || response.body.isEmpty
    }

    /// Decodes `type` from the JSON body of `response`.
    ///
    /// `Data` is the raw body bytes, never JSON-decoded. An empty body (see ``hasNoContent(_:)``) yields `nil` for an `Optional` type and
    /// ``EmptyResponse`` for that type; any other type throws ``EmptyBodyError`` — a clear message
    /// instead of a JSON syntax error.
    /// - Throws: ``EmptyBodyError``, or the decoder's `DecodingError`.
    public func decodeJSON<T: Decodable>(_ type: T.Type, from response: HTTPResponse) throws -> T {
        if hasNoContent(response) {
            if let optional = T.self as? any OptionalMarker.Type, let none = optional.noneValue as? T { return none }
            if let empty = EmptyResponse() as? T { return empty }
            if let bytes = Data() as? T { return bytes }
            throw EmptyBodyError()
        }
        if let bytes = response.body as? T { return bytes }
        return try decoder.decode(T.self, from: response.body)
    }
}
