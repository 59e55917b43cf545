import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HAR entries made to be replayed (CourierTesting's recorder and `ReplayTransport`): whole bodies,
/// redacted by the same ``Redactor`` as logs, plus a digest of the redacted request body.
///
/// Unlike ``init(exchanges:creator:)`` — a preview for people — a fixture keeps each body whole:
/// text bodies as redacted text, binary bodies as Base64 (HAR 1.2 `content.encoding`) unless they
/// contain a secret learned from the exchange, in which case only their size is written.
extension HARLog {
    /// The archive's entries, oldest first.
    package var entries: [Entry] { log.entries }

    /// An archive of `entries`, in the order given.
    package init(fixtureEntries entries: [Entry], creator: Creator = .courier) {
        self.init(log: Log(creator: creator, entries: entries))
    }

    /// The exchange a fixture entry is made of: the request as sent and the buffered response.
    package struct FixtureExchange: Sendable {
        /// The request as the transport received it.
        package var request: URLRequest
        /// The request body bytes (`httpBody`); `nil` when there was none or it was a stream.
        package var requestBody: Data?
        /// The response, its body in memory.
        package var response: HTTPResponse
        /// The call's path template (``RequestContext/pathTemplate``).
        package var pathTemplate: String
        /// The call's request ID.
        package var requestID: String?
        /// When the request left.
        package var started: Date
        /// Time from request to response.
        package var duration: Duration

        /// Creates an exchange.
        package init(
            request: URLRequest, requestBody: Data?, response: HTTPResponse, pathTemplate: String,
            requestID: String?, started: Date, duration: Duration
        ) {
            self.request = request
            self.requestBody = requestBody
            self.response = response
            self.pathTemplate = pathTemplate
            self.requestID = requestID
            self.started = started
            self.duration = duration
        }
    }

    /// A fixture entry for `exchange`, every text redacted by `redactor` with the secrets learned
    /// from the whole exchange (header values, URL, both bodies).
    package static func fixtureEntry(for exchange: FixtureExchange, redactor: Redactor) -> Entry {
        let request = exchange.request
        let requestHeaders = HTTPHeaders(request.allHTTPHeaderFields ?? [:])
        let requestType = requestHeaders["Content-Type"]
        let digest = exchange.requestBody.flatMap {
            bodyDigest(of: $0, contentType: requestType, headers: requestHeaders, url: request.url, redactor: redactor)
        }

        var secrets = SecretValues()
        redactor.learn(headers: requestHeaders, into: &secrets)
        redactor.learn(headers: exchange.response.headers, into: &secrets)
        if let body = exchange.requestBody { redactor.learn(body: body, contentType: requestType, into: &secrets) }
        redactor.learn(body: exchange.response.data, contentType: exchange.response.headers["Content-Type"], into: &secrets)
        let url = redactor.redact(url: request.url?.absoluteString ?? "", learning: &secrets)
        let responseURL = exchange.response.url.map { redactor.redact(url: $0.absoluteString, learning: &secrets) }

        let postData = exchange.requestBody.flatMap { body -> PostData? in
            guard !body.isEmpty else { return nil }
            let (text, _, comment) = fixtureText(of: body, contentType: requestType, redactor: redactor, secrets: &secrets)
            return PostData(mimeType: requestType ?? "application/octet-stream", text: text ?? "", comment: comment)
        }
        let response = fixtureResponse(exchange.response, url: responseURL, redactor: redactor, secrets: &secrets)
        let totalMS =
            Double(exchange.duration.components.seconds) * 1000
            + Double(exchange.duration.components.attoseconds) / 1e15
        return Entry(
            startedDateTime: ISO8601Parsing.string(from: exchange.started, fractionalDigits: 3) ?? "1970-01-01T00:00:00.000Z",
            time: totalMS,
            request: Request(
                method: request.httpMethod ?? "GET",
                url: url,
                httpVersion: "",
                cookies: [],
                headers: redactor.redact(requestHeaders, secrets: secrets).map { NameValue(name: $0.name, value: $0.value) },
                queryString: queryString(of: url),
                postData: postData,
                headersSize: -1,
                bodySize: exchange.requestBody?.count ?? 0,
                comment: nil,
                bodyDigest: digest),
            response: response,
            cache: Cache(),
            timings: Timings(blocked: -1, dns: -1, connect: -1, send: 0, wait: totalMS, receive: 0, ssl: -1),
            comment: nil,
            requestID: exchange.requestID,
            attempts: nil,
            cacheOutcome: nil,
            pathTemplate: exchange.pathTemplate.isEmpty ? nil : redactor.scrub(exchange.pathTemplate, secrets: secrets))
    }

    /// `sha256:` and the hex SHA-256 of `body` as a fixture writes it — its redacted text (secrets
    /// learned from the request's header fields and URL replaced), or the raw bytes of a binary
    /// body — so a recorded digest and a live request's digest compare equal whatever the secrets.
    /// `nil` for an empty body.
    package static func bodyDigest(
        of body: Data, contentType: String?, headers: HTTPHeaders, url: URL?, redactor: Redactor
    ) -> String? {
        guard !body.isEmpty else { return nil }
        var secrets = SecretValues()
        redactor.learn(headers: headers, into: &secrets)
        _ = redactor.redact(url: url?.absoluteString ?? "", learning: &secrets)
        let bytes: Data
        switch fixturePreview(of: body, contentType: contentType, redactor: redactor, secrets: &secrets) {
        case .text(let text, _)?: bytes = Data(text.utf8)
        case .binary?, nil: bytes = withoutMultipartBoundary(body, contentType: contentType)
        }
        return "sha256:" + SHA256.hash(bytes).map { String(format: "%02x", $0) }.joined()
    }

    /// The redactor's preview of a whole body, except that text which is not valid UTF-8 (a
    /// Latin-1 page) counts as binary: a fixture keeps its exact bytes (Base64), never the
    /// preview's U+FFFD replacements and note.
    private static func fixturePreview(
        of body: Data, contentType: String?, redactor: Redactor, secrets: inout SecretValues
    ) -> BodyPreview? {
        guard UTF8Text.isValid(body) else { return .binary(size: body.count, contentType: contentType) }
        return redactor.preview(of: body, contentType: contentType, limit: Int.max, secrets: &secrets)
    }

    /// A multipart body with its boundary (RFC 2046 §5.1.1, from `contentType`) replaced by a fixed
    /// one: a form builds a new random boundary on every run, so the digest of the raw bytes
    /// would never match the recording. Other bodies are returned as they are.
    static func withoutMultipartBoundary(_ body: Data, contentType: String?) -> Data {
        guard let contentType, contentType.lowercased().hasPrefix("multipart/"),
            let boundary = MediaTypeParameters.value(of: "boundary", in: contentType)
        else { return body }
        let needle = [UInt8](("--" + boundary).utf8)
        let replacement = [UInt8]("--courier-fixture-boundary".utf8)
        let bytes = [UInt8](body)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == needle[0], index + needle.count <= bytes.count,
                bytes[index..<(index + needle.count)].elementsEqual(needle)
            {
                output += replacement
                index += needle.count
            } else {
                output.append(bytes[index])
                index += 1
            }
        }
        return Data(output)
    }

    private static func fixtureResponse(
        _ response: HTTPResponse, url: String?, redactor: Redactor, secrets: inout SecretValues
    ) -> Response {
        let type = response.headers["Content-Type"]
        let body = response.data
        var content = Content(size: body.count, mimeType: type ?? "x-unknown", text: nil, comment: nil)
        if !body.isEmpty {
            let (text, encoding, comment) = fixtureText(of: body, contentType: type, redactor: redactor, secrets: &secrets)
            content.text = text
            content.encoding = encoding
            content.comment = comment
        }
        // The body is written decoded: a replay must not announce an encoding or a length it lacks.
        var headers = redactor.redact(response.headers, secrets: secrets)
        for name in ["Content-Encoding", "Content-Length", "Transfer-Encoding"] { headers[name] = nil }
        return Response(
            status: response.statusCode,
            statusText: reasonPhrase(response.statusCode),
            httpVersion: "",
            cookies: [],
            headers: headers.map { NameValue(name: $0.name, value: $0.value) },
            content: content,
            redirectURL: headers["Location"] ?? "",
            headersSize: -1,
            bodySize: body.count,
            comment: url.map { "final URL \($0)" },
            error: nil)
    }

    /// The whole body as a fixture keeps it: (text, encoding, comment).
    private static func fixtureText(
        of body: Data, contentType: String?, redactor: Redactor, secrets: inout SecretValues
    ) -> (String?, String?, String?) {
        switch fixturePreview(of: body, contentType: contentType, redactor: redactor, secrets: &secrets) {
        case .text(let text, _)?:
            return (text, nil, "redacted by Courier")
        case .binary?:
            let holdsSecret = secrets.values.contains { secret in
                let needle = Data(secret.utf8)
                return !needle.isEmpty && body.range(of: needle) != nil
            }
            if holdsSecret { return (nil, nil, "binary body of \(body.count) bytes held a secret; not recorded") }
            // A multipart form is not redacted part by part: one with a secret field (a
            // `password` part of a login form) is not recorded at all.
            if contentType?.lowercased().hasPrefix("multipart/") == true,
                multipartFieldNames(in: body).contains(where: { redactor.bodyFields.matches($0) })
            {
                return (nil, nil, "multipart body of \(body.count) bytes has a secret field; not recorded")
            }
            return (body.base64EncodedString(), "base64", nil)
        case nil:
            return (nil, nil, nil)
        }
    }

    /// The `name` parameters of a multipart body's `Content-Disposition` fields (RFC 7578 §4.2).
    static func multipartFieldNames(in body: Data) -> [String] {
        let bytes = [UInt8](body)
        let marker = Array("name=\"".utf8)
        var names: [String] = []
        var index = 0
        while index + marker.count <= bytes.count {
            guard bytes[index..<(index + marker.count)].elementsEqual(marker) else {
                index += 1
                continue
            }
            let start = index + marker.count
            guard let end = bytes[start...].firstIndex(of: UInt8(ascii: "\"")) else { break }
            names.append(String(decoding: bytes[start..<end], as: UTF8.self))
            index = end + 1
        }
        return names
    }

    /// The decoded query parameters of a (redacted) URL.
    package static func queryString(of url: String) -> [NameValue] {
        let withoutFragment = url.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard let question = withoutFragment.firstIndex(of: "?") else { return [] }
        return withoutFragment[withoutFragment.index(after: question)...]
            .split(separator: "&")
            .map { pair in
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = FormRedaction.decode(parts[0])
                let value = parts.count > 1 ? FormRedaction.decode(parts[1]) : ""
                return NameValue(name: name, value: value)
            }
    }
}
