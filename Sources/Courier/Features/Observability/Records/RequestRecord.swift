import Foundation

/// A redacted record of one request as an interceptor saw it — what logs, HAR files and cURL
/// commands are made of. Holds no secret: URL, headers and body preview went through a
/// ``Redactor`` before the record existed.
public struct RequestRecord: Sendable, Hashable {
    /// The call's request ID (``RequestContext/requestID``).
    public var requestID: RequestID
    /// The HTTP method, e.g. `GET`.
    public var method: HTTPMethod
    /// The endpoint's path template, e.g. `/items/{id}` (``RequestContext/pathTemplate``).
    public var pathTemplate: String
    /// The full URL with sensitive query parameters replaced by the redaction marker.
    public var url: String
    /// The header fields, sensitive values replaced.
    public var headers: HTTPHeaders
    /// The redacted body preview; `nil` when the body is empty or the logging policy is
    /// ``LoggingPolicy/safe`` (metadata only).
    public var body: BodyPreview?
    /// The body size in bytes; `nil` when the body is a stream whose size is unknown.
    public var bodySize: Int?
    /// The `Content-Type` header value, when present.
    public var contentType: String?
    /// The attempt this request is about to make, from 1 (see ``RequestContext/attempt``).
    public var attempt: Int
    /// Wall-clock time the record was taken (for HAR `startedDateTime`).
    public var timestamp: Date

    /// Creates a record from parts that are already redacted.
    package init(
        requestID: RequestID, method: HTTPMethod, pathTemplate: String, url: String, headers: HTTPHeaders,
        body: BodyPreview?, bodySize: Int?, contentType: String?, attempt: Int, timestamp: Date
    ) {
        self.requestID = requestID
        self.method = method
        self.pathTemplate = pathTemplate
        self.url = url
        self.headers = headers
        self.body = body
        self.bodySize = bodySize
        self.contentType = contentType
        self.attempt = attempt
        self.timestamp = timestamp
    }
}

/// A redacted record of the response that ended a call (or an attempt, depending on where the
/// ``LoggingInterceptor`` sits).
public struct ResponseRecord: Sendable, Hashable {
    /// The call's request ID.
    public var requestID: RequestID
    /// The status code (RFC 9110 §15).
    public var statusCode: Int
    /// The final URL after redirects, redacted, when the transport reported it.
    public var url: String?
    /// The header fields, sensitive values (`Set-Cookie`…) replaced.
    public var headers: HTTPHeaders
    /// The redacted body preview; `nil` when empty or when the logging policy is ``LoggingPolicy/safe``.
    public var body: BodyPreview?
    /// The body size in bytes, after content decoding.
    public var bodySize: Int
    /// The `Content-Type` header value, when present.
    public var contentType: String?
    /// Time from the request record to the response, measured on `ContinuousClock`.
    public var duration: Duration
    /// The number of attempts made when the response arrived (1 when there was no retry).
    public var attempt: Int

    /// Creates a record from parts that are already redacted.
    package init(
        requestID: RequestID, statusCode: Int, url: String?, headers: HTTPHeaders, body: BodyPreview?,
        bodySize: Int, contentType: String?, duration: Duration, attempt: Int
    ) {
        self.requestID = requestID
        self.statusCode = statusCode
        self.url = url
        self.headers = headers
        self.body = body
        self.bodySize = bodySize
        self.contentType = contentType
        self.duration = duration
        self.attempt = attempt
    }
}

/// A redacted record of a call that ended without a response: a transport failure,
/// cancellation, or an error an inner interceptor threw.
public struct ErrorRecord: Sendable, Hashable {
    /// The call's request ID.
    public var requestID: RequestID
    /// A stable, low-cardinality label: `offline`, `timedOut`, `cancelled`, `transport`,
    /// `pinning`, `sessionExpired`… (see `kind(of:)`).
    public var kind: String
    /// The error domain, e.g. `NSURLErrorDomain`, or the Swift type name.
    public var domain: String
    /// The error code, e.g. `-1009` for `URLError.notConnectedToInternet`; `nil` when there is none.
    public var code: Int?
    /// A human-readable description, scrubbed of the call's secrets.
    public var message: String
    /// Time from the request record to the failure, measured on `ContinuousClock`.
    public var duration: Duration
    /// The number of attempts made when the call failed.
    public var attempt: Int

    /// Creates a record from parts that are already redacted.
    package init(
        requestID: RequestID, kind: String, domain: String, code: Int?, message: String, duration: Duration, attempt: Int
    ) {
        self.requestID = requestID
        self.kind = kind
        self.domain = domain
        self.code = code
        self.message = message
        self.duration = duration
        self.attempt = attempt
    }
}
