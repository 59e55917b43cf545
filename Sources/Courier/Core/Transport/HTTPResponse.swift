import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An HTTP response: the head (status, header fields, final URL) and one body value.
///
/// The body is a ``MessageBody`` either way. In a buffered call (``APIClient/send(_:)-(E)``,
/// ``Transport/send(_:)``) it holds bytes already in memory, readable any number of times, also
/// as ``data``. In a streamed call (``APIClient/stream(_:options:)``) it is the network stream:
/// its bytes are still arriving, it can be read once, and ``data`` is empty; an interceptor may
/// wrap it (to count or tee it) but must not read it. ``MessageBody/isBuffered`` tells them apart.
///
/// This is also the response type of raw-status endpoints (see ``StatusValidation/none``), where
/// statuses such as 409, 429 or 503 are steps of a flow and the caller reads them directly.
/// Equality and hashing compare status, header fields, ``data`` and URL — never a stream.
public struct HTTPResponse: Sendable, Hashable {
    /// The status code, e.g. `200` (RFC 9110 §15).
    public var statusCode: Int
    /// The response header fields.
    public var headers: HTTPHeaders
    /// The final URL after redirects, when the transport knows it.
    public var url: URL?
    /// The body after content decoding (gzip/br are undone by the transport): bytes in memory, or
    /// the network stream of a streamed call.
    public var body: MessageBody

    /// The body's bytes when they are in memory (``MessageBody/isBuffered``); empty when there is
    /// no body or when the body is a stream still arriving (read ``body`` then). Setting it
    /// replaces the body with these bytes.
    public var data: Data {
        get { body.bufferedBytes ?? Data() }
        set { body = MessageBody(newValue) }
    }

    /// Creates a response whose body is `body`, in memory.
    ///
    /// - Parameters:
    ///   - statusCode: The status code (RFC 9110 §15).
    ///   - headers: The header fields.
    ///   - body: The body bytes; none by default.
    ///   - url: The final URL, when known.
    public init(statusCode: Int, headers: HTTPHeaders = HTTPHeaders(), body: Data = Data(), url: URL? = nil) {
        self.init(statusCode: statusCode, headers: headers, body: MessageBody(body), url: url)
    }

    /// Creates a response with any body: bytes in memory or a stream.
    ///
    /// - Parameters:
    ///   - statusCode: The status code (RFC 9110 §15).
    ///   - headers: The header fields.
    ///   - body: The body.
    ///   - url: The final URL, when known.
    public init(statusCode: Int, headers: HTTPHeaders = HTTPHeaders(), body: MessageBody, url: URL? = nil) {
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

    /// Compares status, header fields, ``data`` and URL (never a stream's bytes).
    public static func == (lhs: HTTPResponse, rhs: HTTPResponse) -> Bool {
        lhs.statusCode == rhs.statusCode && lhs.headers == rhs.headers && lhs.data == rhs.data && lhs.url == rhs.url
    }

    /// Hashes what ``==(_:_:)`` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(statusCode)
        hasher.combine(headers)
        hasher.combine(data)
        hasher.combine(url)
    }

    /// `true` for 2xx statuses.
    public var isSuccess: Bool { (200..<300).contains(statusCode) }

    /// The body decoded as UTF-8 (invalid sequences replaced), at most `limit` bytes of it.
    /// - Parameter limit: Maximum number of body bytes to read, in bytes.
    public func bodySnippet(limit: Int = 512) -> String {
        String(decoding: data.prefix(max(0, limit)), as: UTF8.self)
    }
}

extension HTTPResponse: CustomStringConvertible, CustomReflectable {
    /// The status, the header fields and URL redacted by the default ``Redactor``
    /// (`Set-Cookie: sid=<redacted>; Path=/`, `?access_token=<redacted>`) and the body by its size
    /// — what `print` and string interpolation show; the properties keep what was received.
    public var description: String {
        let redactor = Redactor()
        let fields = redactor.redact(headers).map { "\($0.name): \($0.value)" }.joined(separator: ", ")
        return "HTTPResponse(\(statusCode), [\(fields)], \(bodySummary)\(url.map { ", " + redactor.redact(url: $0) } ?? ""))"
    }

    /// What `dump(_:)` and the debugger show: the ``description``'s parts.
    public var customMirror: Mirror {
        let redactor = Redactor()
        return Mirror(
            self,
            children: [
                "statusCode": statusCode, "headers": redactor.redact(headers), "body": bodySummary,
                "url": url.map(redactor.redact(url:)) as Any,
            ], displayStyle: .struct)
    }

    /// `"<n> bytes"`, or `"stream"` for a body still arriving.
    private var bodySummary: String { body.isBuffered ? "\(data.count) bytes" : "stream" }
}
