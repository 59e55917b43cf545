import Foundation

extension HARLog {
    /// Builds an archive of `exchanges`, oldest first.
    ///
    /// Bodies appear only for exchanges recorded under ``LoggingPolicy/debugSafe``; header values,
    /// query values and cookies are the redacted ones from the records. When phase timings are
    /// known (Apple) they fill `dns`, `connect`, `ssl`, `send` and `receive`; `wait` is the rest of
    /// the measured duration. Without them (Linux) the whole duration is `wait`.
    public init(exchanges: [NetworkExchange], creator: Creator = .courier) {
        let entries =
            exchanges
            .sorted { $0.request.timestamp < $1.request.timestamp }
            .map(HARLog.entry(for:))
        self.init(log: Log(creator: creator, entries: entries))
    }

    /// The archive as JSON (UTF-8, pretty-printed, keys sorted).
    /// - Throws: `EncodingError` (not expected for these types).
    public func jsonData() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return try encoder.encode(self)
    }

    static func entry(for exchange: NetworkExchange) -> Entry {
        let request = exchange.request
        let totalMS = milliseconds(exchange.duration)
        let timings = self.timings(total: totalMS, phases: exchange.timings)
        let httpVersion = httpVersion(of: exchange.timings?.networkProtocol)
        return Entry(
            startedDateTime: ISO8601Parsing.string(from: request.timestamp, fractionalDigits: 3) ?? "1970-01-01T00:00:00.000Z",
            time: [timings.blocked, timings.dns, timings.connect, timings.send, timings.wait, timings.receive]
                .filter { $0 >= 0 }.reduce(0, +),
            request: Request(
                method: request.method.rawValue,
                url: request.url,
                httpVersion: httpVersion,
                cookies: requestCookies(request.headers),
                headers: request.headers.map { NameValue(name: $0.name, value: $0.value) },
                queryString: queryString(of: request.url),
                postData: postData(request),
                headersSize: -1,
                bodySize: request.bodySize ?? -1,
                comment: request.attempt > 1 ? "attempt \(request.attempt)" : nil),
            response: response(for: exchange, httpVersion: httpVersion),
            cache: Cache(),
            timings: timings,
            comment: nil,
            requestID: request.requestID.description,
            attempts: exchange.response?.attempt ?? exchange.error?.attempt,
            cacheOutcome: exchange.cacheOutcome?.description,
            pathTemplate: request.pathTemplate.isEmpty ? nil : request.pathTemplate)
    }

    private static func response(for exchange: NetworkExchange, httpVersion: String) -> Response {
        switch exchange.outcome {
        case .response(let response):
            let mimeType = response.contentType ?? "x-unknown"
            var content = Content(size: response.bodySize, mimeType: mimeType, text: nil, comment: nil)
            switch response.body {
            case .text(let text, let truncated)?:
                content.text = text
                if truncated {
                    content.comment = "truncated and redacted by Courier (body is \(response.bodySize) bytes)"
                } else {
                    content.comment = "redacted by Courier"
                }
            case .binary?:
                content.comment = "binary body not recorded"
            case nil:
                if response.bodySize > 0 { content.comment = "body not recorded (logging policy)" }
            }
            let encoded = response.headers.contains("Content-Encoding")
            return Response(
                status: response.statusCode,
                statusText: reasonPhrase(response.statusCode),
                httpVersion: httpVersion,
                cookies: responseCookies(response.headers),
                headers: response.headers.map { NameValue(name: $0.name, value: $0.value) },
                content: content,
                redirectURL: response.headers["Location"] ?? "",
                headersSize: -1,
                bodySize: encoded ? -1 : response.bodySize,
                comment: nil,
                error: nil)
        case .failure(let error):
            let code = error.code.map { " (\($0))" } ?? ""
            return Response(
                status: 0, statusText: "", httpVersion: "", cookies: [], headers: [],
                content: Content(size: 0, mimeType: "x-unknown", text: nil, comment: nil),
                redirectURL: "", headersSize: -1, bodySize: -1,
                comment: nil, error: "\(error.kind)\(code): \(error.message)")
        }
    }

    private static func postData(_ request: RequestRecord) -> PostData? {
        let mimeType = request.contentType ?? "application/octet-stream"
        switch request.body {
        case .text(let text, let truncated)?:
            return PostData(
                mimeType: mimeType, text: text,
                comment: truncated
                    ? "truncated and redacted by Courier (body is \(request.bodySize ?? 0) bytes)" : "redacted by Courier")
        case .binary(let size, _)?:
            return PostData(mimeType: mimeType, text: "", comment: "binary body of \(size) bytes not recorded")
        case nil:
            return nil
        }
    }

    private static func timings(total: Double, phases: TaskTimings?) -> Timings {
        guard let phases else {
            return Timings(blocked: -1, dns: -1, connect: -1, send: 0, wait: total, receive: 0, ssl: -1)
        }
        let dns = phases.domainLookup.map(milliseconds) ?? -1
        let connect = phases.connect.map(milliseconds) ?? -1
        let ssl = phases.secureConnection.map(milliseconds) ?? -1
        let send = phases.requestSend.map(milliseconds) ?? 0
        let receive = phases.responseReceive.map(milliseconds) ?? 0
        // `ssl` is part of `connect` (HAR 1.2), so it is not subtracted again.
        let wait = max(0, total - max(0, dns) - max(0, connect) - send - receive)
        return Timings(blocked: -1, dns: dns, connect: connect, send: send, wait: wait, receive: receive, ssl: ssl)
    }

    private static func milliseconds(_ duration: Duration) -> Double {
        let ms = Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15
        return (ms * 1000).rounded() / 1000
    }

    private static func httpVersion(of alpn: String?) -> String {
        switch alpn?.lowercased() {
        case "http/1.1"?: return "HTTP/1.1"
        case "http/1.0"?: return "HTTP/1.0"
        case "h2"?, "h2c"?: return "HTTP/2.0"
        case "h3"?: return "HTTP/3.0"
        default: return ""
        }
    }

    private static func requestCookies(_ headers: HTTPHeaders) -> [Cookie] {
        headers.values(for: "Cookie").flatMap { $0.split(separator: ";") }.compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            let value = parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : ""
            return Cookie(name: name, value: value)
        }
    }

    private static func responseCookies(_ headers: HTTPHeaders) -> [Cookie] {
        headers.values(for: "Set-Cookie").compactMap { header in
            let attributes = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = attributes.first, let equals = first.firstIndex(of: "=") else { return nil }
            var cookie = Cookie(name: String(first[..<equals]), value: String(first[first.index(after: equals)...]))
            for attribute in attributes.dropFirst() {
                // An empty attribute (`sid=x; ; Path=/`, `;=`) names nothing: skipped.
                let parts = attribute.split(separator: "=", maxSplits: 1).map(String.init)
                guard let name = parts.first else { continue }
                switch name.lowercased() {
                case "path": cookie.path = parts.count > 1 ? parts[1] : nil
                case "domain": cookie.domain = parts.count > 1 ? parts[1] : nil
                case "httponly": cookie.httpOnly = true
                case "secure": cookie.secure = true
                default: break
                }
            }
            return cookie
        }
    }

    /// The RFC 9110 §15 reason phrase of common statuses; empty for others.
    static func reasonPhrase(_ status: Int) -> String {
        let phrases: [Int: String] = [
            100: "Continue", 101: "Switching Protocols", 200: "OK", 201: "Created", 202: "Accepted",
            203: "Non-Authoritative Information", 204: "No Content", 205: "Reset Content", 206: "Partial Content",
            300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
            307: "Temporary Redirect", 308: "Permanent Redirect", 400: "Bad Request", 401: "Unauthorized",
            402: "Payment Required", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed",
            406: "Not Acceptable", 407: "Proxy Authentication Required", 408: "Request Timeout", 409: "Conflict",
            410: "Gone", 411: "Length Required", 412: "Precondition Failed", 413: "Content Too Large",
            414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable",
            417: "Expectation Failed", 421: "Misdirected Request", 422: "Unprocessable Content",
            425: "Too Early", 426: "Upgrade Required", 428: "Precondition Required", 429: "Too Many Requests",
            431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
            500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
            504: "Gateway Timeout", 505: "HTTP Version Not Supported",
        ]
        return phrases[status] ?? ""
    }
}
