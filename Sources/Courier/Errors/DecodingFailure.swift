import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a response body could not become the endpoint's response type.
public struct DecodingFailure: Error, Sendable, CustomStringConvertible {
    /// The error the decoder threw (usually a `DecodingError`); for an empty body, an
    /// ``EmptyBodyError``.
    public var underlying: any Error
    /// Where in the document decoding failed, e.g. `items[1].name`; `<root>` for the top level.
    public var codingPath: String
    /// The type that was being decoded, e.g. `ItemList`.
    public var typeName: String
    /// The status of the response.
    public var statusCode: Int
    /// The first 256 bytes of the body as text, for logs.
    public var bodySnippet: String

    /// `true` when the body was empty but the response type needs a value.
    public var isEmptyBody: Bool { underlying is EmptyBodyError }

    /// Creates a failure.
    public init(underlying: any Error, codingPath: String, typeName: String, statusCode: Int, bodySnippet: String) {
        self.underlying = underlying
        self.codingPath = codingPath
        self.typeName = typeName
        self.statusCode = statusCode
        self.bodySnippet = bodySnippet
    }

    public var description: String {
        if isEmptyBody { return "\(typeName): empty body (HTTP \(statusCode)); use an Optional or EmptyResponse type if no content is expected" }
        let detail = (underlying as? DecodingError)?.debugSummary ?? String(describing: underlying)
        return "\(typeName) at \(codingPath): \(detail)"
    }
}

/// The body was empty (204, 205, HEAD or zero bytes) but the response type requires a value.
public struct EmptyBodyError: Error, Sendable, CustomStringConvertible {
    /// Creates the error.
    public init() {}
    public var description: String { "empty body" }
}
