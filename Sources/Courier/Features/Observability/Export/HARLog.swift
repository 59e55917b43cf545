/// An HTTP Archive (HAR 1.2, W3C Web Performance WG draft "HTTP Archive (HAR) format",
/// http://www.softwareishard.com/blog/har-12-spec/) — the JSON file browser dev tools, Charles,
/// Proxyman and HAR viewers open.
///
/// Build one from recorded exchanges with ``init(exchanges:creator:)`` or let a ``HARRecorder``
/// do it. Every text in it comes from redacted records. Fields named with a leading underscore
/// are custom fields, which HAR 1.2 allows.
public struct HARLog: Codable, Sendable, Hashable {
    /// The root object.
    package var log: Log

    /// Creates an archive.
    package init(log: Log) { self.log = log }

    /// `log`: the archive's only top-level member.
    package struct Log: Codable, Sendable, Hashable {
        /// Format version, `1.2`.
        package var version: String
        /// The application that wrote the file.
        package var creator: Creator
        /// One entry per recorded exchange, oldest first.
        package var entries: [Entry]
        /// A free-form note.
        package var comment: String?

        /// Creates the log object.
        package init(version: String = "1.2", creator: Creator, entries: [Entry], comment: String? = nil) {
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
    package struct Entry: Codable, Sendable, Hashable {
        /// Start of the request, ISO 8601 with milliseconds, e.g. `2026-05-25T22:46:27.580Z`.
        package var startedDateTime: String
        /// Total time in milliseconds: the sum of the non-negative ``Timings`` values.
        package var time: Double
        /// The request.
        package var request: Request
        /// The response; status 0 with ``Response/error`` when there was none.
        package var response: Response
        /// Cache usage; Courier leaves it empty (the outcome is in `_cacheOutcome`).
        package var cache: Cache
        /// Phase timings in milliseconds.
        package var timings: Timings
        /// A free-form note.
        package var comment: String?
        /// Custom field `_requestID`: Courier's request ID, to join with logs and the server's
        /// `X-Request-ID`.
        package var requestID: String?
        /// Custom field `_attempts`: attempts made (retries + 1).
        package var attempts: Int?
        /// Custom field `_cacheOutcome`: how the HTTP cache answered (`hit`, `revalidated`, `miss`…).
        package var cacheOutcome: String?
        /// Custom field `_pathTemplate`: the call's path template as logs and metrics show it
        /// (``RequestContext/pathTemplate``), e.g. `/items/{id}`, or a GraphQL call's
        /// `/graphql query GetItem` where every URL is the same `/graphql`.
        package var pathTemplate: String?

        enum CodingKeys: String, CodingKey {
            case startedDateTime, time, request, response, cache, timings, comment
            case requestID = "_requestID"
            case attempts = "_attempts"
            case cacheOutcome = "_cacheOutcome"
            case pathTemplate = "_pathTemplate"
        }
    }

    /// `request`.
    package struct Request: Codable, Sendable, Hashable {
        /// The method, e.g. `GET`.
        package var method: String
        /// Absolute URL, redacted.
        package var url: String
        /// `HTTP/1.1`, `HTTP/2.0`…, or empty when unknown.
        package var httpVersion: String
        /// Cookies of the `Cookie` header (values redacted).
        package var cookies: [Cookie]
        /// Header fields, redacted.
        package var headers: [NameValue]
        /// Query parameters, decoded, redacted.
        package var queryString: [NameValue]
        /// The body, when a redacted text preview was recorded.
        package var postData: PostData?
        /// Always -1: the header block's size is not known to URLSession clients.
        package var headersSize: Int
        /// Body size in bytes; -1 when unknown (streamed).
        package var bodySize: Int
        /// A free-form note (the attempt number on a retry).
        package var comment: String?
        /// Custom field `_bodyDigest`: `sha256:` and the hex SHA-256 of the redacted body text, for
        /// strict replay matching without the body; written by fixture recording only.
        package var bodyDigest: String?

        enum CodingKeys: String, CodingKey {
            case method, url, httpVersion, cookies, headers, queryString, postData, headersSize, bodySize, comment
            case bodyDigest = "_bodyDigest"
        }
    }

    /// `response`.
    package struct Response: Codable, Sendable, Hashable {
        /// The status; 0 when the call failed without a response.
        package var status: Int
        /// The reason phrase (RFC 9110 §15), e.g. `Not Found`; empty when unknown.
        package var statusText: String
        /// `HTTP/1.1`, `HTTP/2.0`…, or empty when unknown.
        package var httpVersion: String
        /// Cookies of the `Set-Cookie` headers (values redacted).
        package var cookies: [Cookie]
        /// Header fields, redacted.
        package var headers: [NameValue]
        /// The body: size, type and the redacted text when recorded.
        package var content: Content
        /// The `Location` header, or empty.
        package var redirectURL: String
        /// Always -1 (unknown).
        package var headersSize: Int
        /// Bytes received; -1 when unknown (a `Content-Encoding` was undone by URLSession, or there
        /// was no response).
        package var bodySize: Int
        /// A free-form note.
        package var comment: String?
        /// Custom field `_error` (as Chrome writes it): why there is no response.
        package var error: String?

        enum CodingKeys: String, CodingKey {
            case status, statusText, httpVersion, cookies, headers, content, redirectURL, headersSize, bodySize, comment
            case error = "_error"
        }
    }

    /// A header or query parameter.
    package struct NameValue: Codable, Sendable, Hashable {
        /// The name.
        package var name: String
        /// The (redacted) value.
        package var value: String
        /// Creates a pair.
        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A cookie (values are always the redaction marker).
    package struct Cookie: Codable, Sendable, Hashable {
        /// The cookie name.
        package var name: String
        /// The redaction marker.
        package var value: String
        /// The `Path` attribute (RFC 6265 §5.2.4).
        package var path: String?
        /// The `Domain` attribute (RFC 6265 §5.2.3).
        package var domain: String?
        /// Whether `HttpOnly` was set.
        package var httpOnly: Bool?
        /// Whether `Secure` was set.
        package var secure: Bool?
    }

    /// `postData`.
    package struct PostData: Codable, Sendable, Hashable {
        /// The request's `Content-Type`.
        package var mimeType: String
        /// The redacted body text (possibly truncated, see `comment`); empty when the archive
        /// gave `params` instead (HAR 1.2: `text` and `params` are mutually exclusive).
        package var text: String
        /// Says whether the text was truncated or left out.
        package var comment: String?
    }

    /// `content`.
    package struct Content: Codable, Sendable, Hashable {
        /// Decoded body size in bytes.
        package var size: Int
        /// The response's `Content-Type`, or `x-unknown`.
        package var mimeType: String
        /// The redacted body text, when the logging policy recorded it.
        package var text: String?
        /// Says whether the text was truncated or left out.
        package var comment: String?
        /// `base64` when ``text`` holds a binary body encoded as Base64 (HAR 1.2); `nil` for text.
        package var encoding: String?
    }

    /// `cache`: empty.
    package struct Cache: Codable, Sendable, Hashable {
        /// Creates the empty object.
        package init() {}
    }

    /// `timings`, in milliseconds; -1 for a phase that does not apply or was not measured.
    package struct Timings: Codable, Sendable, Hashable {
        /// Queued before a connection was available; always -1 (not measured).
        package var blocked: Double
        /// DNS resolution, or -1.
        package var dns: Double
        /// Connection set-up including TLS, or -1.
        package var connect: Double
        /// Sending the request.
        package var send: Double
        /// Waiting for the first response byte (the rest of the call's duration without phase timings).
        package var wait: Double
        /// Reading the response.
        package var receive: Double
        /// The TLS handshake (included in `connect`), or -1.
        package var ssl: Double

        /// Creates the object.
        package init(blocked: Double, dns: Double, connect: Double, send: Double, wait: Double, receive: Double, ssl: Double) {
            (self.blocked, self.dns, self.connect, self.ssl) = (blocked, dns, connect, ssl)
            (self.send, self.wait, self.receive) = (send, wait, receive)
        }

        /// Decodes one from another tool's archive too: HAR 1.2 makes `blocked`, `dns`, `connect`
        /// and `ssl` optional (-1 when absent).
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            blocked = try container.decodeIfPresent(Double.self, forKey: .blocked) ?? -1
            dns = try container.decodeIfPresent(Double.self, forKey: .dns) ?? -1
            connect = try container.decodeIfPresent(Double.self, forKey: .connect) ?? -1
            send = try container.decode(Double.self, forKey: .send)
            wait = try container.decode(Double.self, forKey: .wait)
            receive = try container.decode(Double.self, forKey: .receive)
            ssl = try container.decodeIfPresent(Double.self, forKey: .ssl) ?? -1
        }
    }
}

extension HARLog.PostData {
    /// Decodes one from another tool's archive too, where `text` may be absent. (Declared in an
    /// extension so that the structure keeps its memberwise initializer.)
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mimeType = try container.decodeIfPresent(String.self, forKey: .mimeType) ?? "application/octet-stream"
        text = try container.decodeIfPresent(String.self, forKey: .text) ?? ""
        comment = try container.decodeIfPresent(String.self, forKey: .comment)
    }
}
