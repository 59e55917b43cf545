import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A complete HTTP response as the transport received it: status, header fields and body bytes.
///
/// This is also the response type of raw-status endpoints (see ``StatusValidation/none``), where
/// statuses such as 409, 429 or 503 are steps of a flow and the caller reads them directly.
///
/// In a streamed call (``APIClient/stream(_:options:)``) the response that passes through the
/// interceptors is the head: ``body`` is empty and ``streamedBody`` carries the bytes still
/// arriving. An interceptor may wrap ``streamedBody`` (to count or tee it) but must not read it.
/// Equality and hashing ignore ``streamedBody``.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code, e.g. `200` (RFC 9110 §15).
    public var statusCode: Int
    /// The response header fields.
    public var headers: HTTPHeaders
    /// The body bytes after content decoding (gzip/br are undone by URLSession); empty when there is none.
    public var body: Data
    /// The final URL after redirects, when the transport knows it.
    public var url: URL?
    /// The body still arriving from the network, in a streamed call; `nil` for a buffered
    /// response (the bytes are in ``body``).
    public var streamedBody: MessageBody?

    /// `true` when the body is streamed (``streamedBody`` is set) rather than in ``body``.
    public var isStreamed: Bool { streamedBody != nil }

    /// Creates a response.
    public init(statusCode: Int, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data(), url: URL? = nil) {
        self.statusCode = statusCode
        self.headers = headers
        self.body = body
        self.url = url
    }

    /// The media type of `Content-Type` without parameters, lower-cased, e.g. `application/json`.
    public var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first.map(String.init) ?? value
        return type.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// The `Date` field (RFC 9110 §6.6.1): when the server generated the response, by the
    /// server's clock; `nil` when absent or not an HTTP-date.
    public var date: Date? { headers["Date"].flatMap(HTTPDate.parse) }

    /// Compares status, header fields, buffered body and URL (never ``streamedBody``).
    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.statusCode == rhs.statusCode && lhs.headers == rhs.headers && lhs.body == rhs.body && lhs.url == rhs.url
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(statusCode)
        hasher.combine(headers)
        hasher.combine(body)
        hasher.combine(url)
    }

    /// `true` for 2xx statuses.
    public var isSuccess: Bool { (200..<300).contains(statusCode) }

    /// The body decoded as UTF-8 (invalid sequences replaced), at most `limit` bytes of it.
    /// - Parameter limit: Maximum number of body bytes to read, in bytes.
    public func bodySnippet(limit: Int = 512) -> String {
        String(decoding: body.prefix(max(0, limit)), as: UTF8.self)
    }
}
