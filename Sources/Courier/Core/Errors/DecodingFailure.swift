import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a response body could not become the endpoint's response type, with what the server
/// actually sent — so a captive portal's HTML page is told apart from malformed JSON or a
/// contract change, by the UI (``kind``) and in logs.
public struct DecodingFailure: Error, Sendable, CustomStringConvertible {
    /// What went wrong, by what the app does about it.
    public enum Kind: String, Sendable, Hashable {
        /// The body was empty but the response type needs a value.
        case emptyBody
        /// The body is not the expected format at all — e.g. a `text/html` page from a captive
        /// portal, a proxy or a load balancer: check connectivity rather than report a bug.
        case unexpectedContentType
        /// The body claims to be JSON (or has no type) but does not parse.
        case malformedBody
        /// Valid JSON that does not fit the type: a missing key, a wrong type, a value out of
        /// range — a contract mismatch between app and server.
        case typeMismatch
        /// One of the client's ``ResponseValidator``s refused the body (with an error of its own,
        /// kept in ``DecodingFailure/underlying``).
        case rejectedByValidator
    }

    /// The error the decoder threw (usually a `DecodingError`); for an empty body, an
    /// ``EmptyBodyError``.
    public var underlying: any Error
    /// Where in the document decoding failed, e.g. `items[1].name`; `<root>` for the top level.
    public var codingPath: String
    /// The type that was being decoded, e.g. `ItemList`.
    public var typeName: String
    /// The status of the response.
    public var statusCode: Int
    /// The media type of the response's `Content-Type`, lower-cased, without parameters.
    public var contentType: String?
    /// The body's length in bytes.
    public var bodyLength: Int
    /// The first 256 bytes of the body as text, redacted like a log (secret JSON fields, tokens).
    public var bodySnippet: String
    /// What went wrong; see ``Kind``.
    public var kind: Kind

    /// `true` when the body was empty but the response type needs a value.
    package var isEmptyBody: Bool { kind == .emptyBody }

    /// Creates a failure; ``kind`` is derived from the error, the media type and the body.
    /// The snippet is redacted with `redactor` (the client's), which also hides the secrets of
    /// `request` (a page that echoes `Authorization` or a token sent in the query).
    package init(
        underlying: any Error, codingPath: String, typeName: String, response: HTTPResponse,
        redactor: Redactor = Redactor(), request: URLRequest? = nil
    ) {
        self.underlying = underlying
        self.codingPath = codingPath
        self.typeName = typeName
        self.statusCode = response.statusCode
        self.contentType = response.mediaType
        self.bodyLength = response.data.count
        var secrets = SecretValues()
        if let request { redactor.learn(request: request, into: &secrets) }
        let preview = redactor.preview(
            of: response.data, contentType: response.headers["Content-Type"], limit: 256, secrets: &secrets)
        self.bodySnippet = preview.map(String.init(describing:)) ?? ""
        self.kind = Self.classify(underlying, mediaType: response.mediaType, body: response.data)
    }

    static func classify(_ error: any Error, mediaType: String?, body: Data) -> Kind {
        if error is EmptyBodyError { return .emptyBody }
        let isWhitespace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
        if body.allSatisfy(isWhitespace) { return .emptyBody }
        // JSONSerialization rejects valid JSON with a number beyond Double (`1e400`).
        let parses =
            (try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])) != nil
            || JSONSyntax.isValid(body)
        if parses { return .typeMismatch }
        if let mediaType, !mediaType.contains("json") { return .unexpectedContentType }
        var head = body.prefix(64)[...]
        if head.starts(with: [0xEF, 0xBB, 0xBF]) { head = head.dropFirst(3) }  // UTF-8 BOM
        if head.drop(while: isWhitespace).first == UInt8(ascii: "<") { return .unexpectedContentType }
        return .malformedBody
    }

    public var description: String {
        let sent = "HTTP \(statusCode), \(contentType ?? "no Content-Type"), \(bodyLength) bytes"
        if let format = underlying as? any BodyFormatError {
            let snippet = format.showsBodySnippet && !bodySnippet.isEmpty ? ": \(bodySnippet.prefix(120))" : ""
            return "\(typeName): \(format) (\(sent))\(snippet)"
        }
        switch kind {
        case .emptyBody:
            return "\(typeName): empty body (\(sent)); use an Optional or EmptyResponse type if no content is expected"
        case .unexpectedContentType:
            return "\(typeName): the server sent \(sent), not JSON: \(bodySnippet.prefix(120))"
        case .malformedBody:
            return "\(typeName): the body is not valid JSON (\(sent)): \(bodySnippet.prefix(120))"
        case .rejectedByValidator:
            return "\(typeName): a response validator refused the body (\(sent)): \(underlying)"
        case .typeMismatch:
            let detail = (underlying as? DecodingError)?.debugSummary ?? String(describing: underlying)
            return "\(typeName) at \(codingPath): \(detail) (\(sent))"
        }
    }
}

/// An error of a body reader that says in its own words why the body is not what the reader
/// expects — a charset Courier cannot decode (``TextDecodingError``), a response that is not an
/// event stream (CourierTransfers' `ServerSentEventError`). ``DecodingFailure/description`` shows
/// it as it is instead of describing a JSON decoding error; the core never names the types of the
/// modules that conform theirs.
package protocol BodyFormatError: Error, CustomStringConvertible {
    /// Whether ``DecodingFailure/description`` ends with the start of the (redacted) body: `true`
    /// when the body shows what the server sent instead (an HTML page where a feed was expected).
    var showsBodySnippet: Bool { get }
}

/// The body was empty (204, 205, HEAD or zero bytes) but the response type requires a value.
public struct EmptyBodyError: Error, Sendable, CustomStringConvertible {
    /// Creates the error.
    public init() {}
    public var description: String { "empty body" }
}

extension TextDecodingError: BodyFormatError {
    /// The reason says it all: a failure shows no body snippet.
    package var showsBodySnippet: Bool { false }
}
