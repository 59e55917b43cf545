/// An HTTP Archive (HAR 1.2, W3C Web Performance WG draft "HTTP Archive (HAR) format",
/// http://www.softwareishard.com/blog/har-12-spec/) — the JSON file browser dev tools, Charles,
/// Proxyman and HAR viewers open.
///
/// Build one from recorded exchanges with ``init(exchanges:creator:)`` or let a ``HARRecorder``
/// do it. Every text in it comes from redacted snapshots. Fields named with a leading underscore
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
        public var name: String
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
        public var request: Request
        public var response: Response
        /// Cache usage; Courier leaves it empty (the outcome is in `_cacheOutcome`).
        public var cache: Cache
        public var timings: Timings
        public var comment: String?
        /// Custom: Courier's request ID, to join with logs and the server's `X-Request-ID`.
        public var _requestID: String?
        /// Custom: attempts made (retries + 1).
        public var _attempts: Int?
        /// Custom: how the HTTP cache answered (`hit`, `revalidated`, `miss`…).
        public var _cacheOutcome: String?
    }

    /// `request`.
    public struct Request: Codable, Sendable, Hashable {
        public var method: String
        /// Absolute URL, redacted.
        public var url: String
        /// `HTTP/1.1`, `HTTP/2.0`…, or empty when unknown.
        public var httpVersion: String
        public var cookies: [Cookie]
        public var headers: [NameValue]
        public var queryString: [NameValue]
        public var postData: PostData?
        /// Always -1: the header block's size is not known to URLSession clients.
        public var headersSize: Int
        /// Body size in bytes; -1 when unknown (streamed).
        public var bodySize: Int
        public var comment: String?
    }

    /// `response`.
    public struct Response: Codable, Sendable, Hashable {
        /// The status; 0 when the call failed without a response.
        public var status: Int
        public var statusText: String
        public var httpVersion: String
        public var cookies: [Cookie]
        public var headers: [NameValue]
        public var content: Content
        /// The `Location` header, or empty.
        public var redirectURL: String
        /// Always -1 (unknown).
        public var headersSize: Int
        /// Bytes received; -1 when unknown (a `Content-Encoding` was undone by URLSession, or there
        /// was no response).
        public var bodySize: Int
        public var comment: String?
        /// Custom (as Chrome writes it): why there is no response.
        public var _error: String?
    }

    /// A header or query parameter.
    public struct NameValue: Codable, Sendable, Hashable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A cookie (values are always the redaction marker).
    public struct Cookie: Codable, Sendable, Hashable {
        public var name: String
        public var value: String
        public var path: String?
        public var domain: String?
        public var httpOnly: Bool?
        public var secure: Bool?
    }

    /// `postData`.
    public struct PostData: Codable, Sendable, Hashable {
        public var mimeType: String
        /// The redacted body text (possibly truncated, see `comment`).
        public var text: String
        public var comment: String?
    }

    /// `content`.
    public struct Content: Codable, Sendable, Hashable {
        /// Decoded body size in bytes.
        public var size: Int
        public var mimeType: String
        /// The redacted body text, when the logging policy recorded it.
        public var text: String?
        public var comment: String?
    }

    /// `cache`: empty.
    public struct Cache: Codable, Sendable, Hashable {
        public init() {}
    }

    /// `timings`, in milliseconds; -1 for a phase that does not apply or was not measured.
    public struct Timings: Codable, Sendable, Hashable {
        public var blocked: Double
        public var dns: Double
        public var connect: Double
        public var send: Double
        public var wait: Double
        public var receive: Double
        public var ssl: Double
    }
}
