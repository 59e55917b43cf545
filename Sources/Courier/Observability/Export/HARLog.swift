/// An HTTP Archive (HAR 1.2, W3C Web Performance WG draft "HTTP Archive (HAR) format",
/// http://www.softwareishard.com/blog/har-12-spec/) — the JSON file browser dev tools, Charles,
/// Proxyman and HAR viewers open.
///
/// Build one from recorded exchanges with ``init(exchanges:creator:)`` or let a ``HARRecorder``
/// do it. Every text in it comes from redacted records. Fields named with a leading underscore
/// are custom fields, which HAR 1.2 allows.
public struct HARLog: Codable, Sendable, Hashable {
    /// The root object.
    public var log: Log

    /// Creates an archive.
    public init(log: Log) { self.log = log }

    /// `log`: the archive's only top-level member.
    public struct Log: Codable, Sendable, Hashable {
        /// Format version, `1.2`.
        public var version: String
        /// The application that wrote the file.
        public var creator: Creator
        /// One entry per recorded exchange, oldest first.
        public var entries: [Entry]
        /// A free-form note.
        public var comment: String?

        /// Creates the log object.
        public init(version: String = "1.2", creator: Creator, entries: [Entry], comment: String? = nil) {
            self.version = version
            self.creator = creator
            self.entries = entries
            self.comment = comment
        }
    }

    /// `creator`: name and version of the writer.
    public struct Creator: Codable, Sendable, Hashable {
        /// The application's name.
        public var name: String
        /// The application's version.
        public var version: String
        /// Creates a creator object.
        public init(name: String, version: String) {
            self.name = name
            self.version = version
        }
        /// Courier itself.
        public static let courier = Creator(name: "Courier", version: "1.0")
    }

    /// One request/response pair.
    public struct Entry: Codable, Sendable, Hashable {
        /// Start of the request, ISO 8601 with milliseconds, e.g. `2026-05-25T22:46:27.580Z`.
        public var startedDateTime: String
        /// Total time in milliseconds: the sum of the non-negative ``Timings`` values.
        public var time: Double
        /// The request.
        public var request: Request
        /// The response; status 0 with ``Response/error`` when there was none.
        public var response: Response
        /// Cache usage; Courier leaves it empty (the outcome is in `_cacheOutcome`).
        public var cache: Cache
        /// Phase timings in milliseconds.
        public var timings: Timings
        /// A free-form note.
        public var comment: String?
        /// Custom field `_requestID`: Courier's request ID, to join with logs and the server's
        /// `X-Request-ID`.
        public var requestID: String?
        /// Custom field `_attempts`: attempts made (retries + 1).
        public var attempts: Int?
        /// Custom field `_cacheOutcome`: how the HTTP cache answered (`hit`, `revalidated`, `miss`…).
        public var cacheOutcome: String?
        /// Custom field `_pathTemplate`: the call's path template as logs and metrics show it
        /// (``RequestContext/pathTemplate``), e.g. `/items/{id}`, or a GraphQL call's
        /// `/graphql query GetItem` where every URL is the same `/graphql`.
        public var pathTemplate: String?

        enum CodingKeys: String, CodingKey {
            case startedDateTime, time, request, response, cache, timings, comment
            case requestID = "_requestID", attempts = "_attempts", cacheOutcome = "_cacheOutcome"
            case pathTemplate = "_pathTemplate"
        }
    }

    /// `request`.
    public struct Request: Codable, Sendable, Hashable {
        /// The method, e.g. `GET`.
        public var method: String
        /// Absolute URL, redacted.
        public var url: String
        /// `HTTP/1.1`, `HTTP/2.0`…, or empty when unknown.
        public var httpVersion: String
        /// Cookies of the `Cookie` header (values redacted).
        public var cookies: [Cookie]
        /// Header fields, redacted.
        public var headers: [NameValue]
        /// Query parameters, decoded, redacted.
        public var queryString: [NameValue]
        /// The body, when a redacted text preview was recorded.
        public var postData: PostData?
        /// Always -1: the header block's size is not known to URLSession clients.
        public var headersSize: Int
        /// Body size in bytes; -1 when unknown (streamed).
        public var bodySize: Int
        /// A free-form note (the attempt number on a retry).
        public var comment: String?
    }

    /// `response`.
    public struct Response: Codable, Sendable, Hashable {
        /// The status; 0 when the call failed without a response.
        public var status: Int
        /// The reason phrase (RFC 9110 §15), e.g. `Not Found`; empty when unknown.
        public var statusText: String
        /// `HTTP/1.1`, `HTTP/2.0`…, or empty when unknown.
        public var httpVersion: String
        /// Cookies of the `Set-Cookie` headers (values redacted).
        public var cookies: [Cookie]
        /// Header fields, redacted.
        public var headers: [NameValue]
        /// The body: size, type and the redacted text when recorded.
        public var content: Content
        /// The `Location` header, or empty.
        public var redirectURL: String
        /// Always -1 (unknown).
        public var headersSize: Int
        /// Bytes received; -1 when unknown (a `Content-Encoding` was undone by URLSession, or there
        /// was no response).
        public var bodySize: Int
        /// A free-form note.
        public var comment: String?
        /// Custom field `_error` (as Chrome writes it): why there is no response.
        public var error: String?

        enum CodingKeys: String, CodingKey {
            case status, statusText, httpVersion, cookies, headers, content, redirectURL, headersSize, bodySize, comment
            case error = "_error"
        }
    }

    /// A header or query parameter.
    public struct NameValue: Codable, Sendable, Hashable {
        /// The name.
        public var name: String
        /// The (redacted) value.
        public var value: String
        /// Creates a pair.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A cookie (values are always the redaction marker).
    public struct Cookie: Codable, Sendable, Hashable {
        /// The cookie name.
        public var name: String
        /// The redaction marker.
        public var value: String
        /// The `Path` attribute (RFC 6265 §5.2.4).
        public var path: String?
        /// The `Domain` attribute (RFC 6265 §5.2.3).
        public var domain: String?
        /// Whether `HttpOnly` was set.
        public var httpOnly: Bool?
        /// Whether `Secure` was set.
        public var secure: Bool?
    }

    /// `postData`.
    public struct PostData: Codable, Sendable, Hashable {
        /// The request's `Content-Type`.
        public var mimeType: String
        /// The redacted body text (possibly truncated, see `comment`).
        public var text: String
        /// Says whether the text was truncated or left out.
        public var comment: String?
    }

    /// `content`.
    public struct Content: Codable, Sendable, Hashable {
        /// Decoded body size in bytes.
        public var size: Int
        /// The response's `Content-Type`, or `x-unknown`.
        public var mimeType: String
        /// The redacted body text, when the logging policy recorded it.
        public var text: String?
        /// Says whether the text was truncated or left out.
        public var comment: String?
    }

    /// `cache`: empty.
    public struct Cache: Codable, Sendable, Hashable {
        /// Creates the empty object.
        public init() {}
    }

    /// `timings`, in milliseconds; -1 for a phase that does not apply or was not measured.
    public struct Timings: Codable, Sendable, Hashable {
        /// Queued before a connection was available; always -1 (not measured).
        public var blocked: Double
        /// DNS resolution, or -1.
        public var dns: Double
        /// Connection set-up including TLS, or -1.
        public var connect: Double
        /// Sending the request.
        public var send: Double
        /// Waiting for the first response byte (the rest of the call's duration without phase timings).
        public var wait: Double
        /// Reading the response.
        public var receive: Double
        /// The TLS handshake (included in `connect`), or -1.
        public var ssl: Double
    }
}
