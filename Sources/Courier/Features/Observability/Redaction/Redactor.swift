import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Removes secrets from everything Courier writes about a request: logs, records, metrics,
/// cURL commands and HAR files. On by default everywhere; configure it, don't bypass it.
///
/// What it hides (names stay visible, values become ``marker``):
/// - **Headers** in ``headers`` — `Authorization: Bearer <redacted>` (the scheme stays, RFC 9110
///   §11.4), `Cookie: sid=<redacted>; lang=<redacted>` (names stay, RFC 6265 §4.2),
///   `Set-Cookie: sid=<redacted>; Path=/; HttpOnly` (attributes stay), `X-API-Key: <redacted>`.
/// - **Query parameters** in ``queryParameters`` and the password of a `user:password@` URL; a
///   query value that is JSON text (a GraphQL `GET`'s `variables`) has its members in
///   ``bodyFields`` hidden like a JSON body's.
/// - **JSON body keys** in ``bodyFields`` at any depth — the whole value, even an object — and
///   `application/x-www-form-urlencoded` fields by the same list.
/// - **Secret values wherever else they appear**: every value hidden by name is remembered for the
///   call and also removed from other headers, the URL and body previews — so a server that echoes
///   the request back, or a token copied into an error message, does not leak it either.
///
/// Body previews are cut to ``bodyPreviewLimit`` bytes; bodies that are not text (images,
/// protobuf, multipart, invalid UTF-8) are summarised as size and content type. Input that is not
/// valid JSON or UTF-8 never traps: it is redacted as far as it can be read, or summarised.
///
/// ```swift
/// var redactor = Redactor()
/// redactor.headers.insert("X-Device-Token")
/// redactor.bodyFields.insert("date_of_birth")
/// let logging = LoggingInterceptor(logger: ConsoleNetworkLogger(), redactor: redactor)
/// ```
public struct Redactor: Sendable, Hashable {
    /// What replaces a hidden value; `<redacted>` by default.
    public var marker: String
    /// Header names whose values are hidden; ``RedactionList/defaultHeaders`` by default.
    public var headers: RedactionList
    /// Query parameter names whose values are hidden; ``RedactionList/defaultQueryParameters``.
    public var queryParameters: RedactionList
    /// JSON keys (any depth) and form field names whose values are hidden;
    /// ``RedactionList/defaultBodyFields``.
    public var bodyFields: RedactionList
    /// Largest body preview, in bytes of the original body; 2048 by default.
    public var bodyPreviewLimit: Int
    /// Shortest remembered secret value, in characters, that is scrubbed wherever it appears;
    /// 4 by default. Shorter values are still hidden by name, just not searched for elsewhere.
    public var minimumSecretLength: Int

    /// Largest number of body bytes scanned to learn secret values that lie beyond the preview
    /// (1 MiB).
    static let learningLimit = 1 << 20

    /// Creates a redactor; every parameter has the default described on its property.
    public init(
        marker: String = "<redacted>",
        headers: RedactionList = .defaultHeaders,
        queryParameters: RedactionList = .defaultQueryParameters,
        bodyFields: RedactionList = .defaultBodyFields,
        bodyPreviewLimit: Int = 2048,
        minimumSecretLength: Int = 4
    ) {
        self.marker = marker
        self.headers = headers
        self.queryParameters = queryParameters
        self.bodyFields = bodyFields
        self.bodyPreviewLimit = max(0, bodyPreviewLimit)
        self.minimumSecretLength = max(1, minimumSecretLength)
    }

    // MARK: Public one-shot API

    /// Redacts header fields: sensitive values replaced, other values scrubbed of the secrets
    /// found in the sensitive ones.
    public func redact(_ headers: HTTPHeaders) -> HTTPHeaders {
        var secrets = SecretValues()
        learn(headers: headers, into: &secrets)
        return redact(headers, secrets: secrets)
    }

    /// The URL as text with sensitive query and fragment parameters and any password replaced.
    public func redact(url: URL) -> String {
        var secrets = SecretValues()
        return redact(url: url.absoluteString, learning: &secrets)
    }

    /// A redacted preview of `body`.
    ///
    /// - Parameters:
    ///   - body: The body bytes.
    ///   - contentType: The `Content-Type` header value (parameters allowed), or `nil`.
    ///   - limit: Largest preview in bytes; ``bodyPreviewLimit`` when `nil`.
    /// - Returns: `nil` for an empty body.
    public func preview(of body: Data, contentType: String?, limit: Int? = nil) -> BodyPreview? {
        var secrets = SecretValues()
        return preview(of: body, contentType: contentType, limit: limit ?? bodyPreviewLimit, secrets: &secrets)
    }

    // MARK: Learning

    /// Remembers the values of sensitive headers.
    func learn(headers: HTTPHeaders, into secrets: inout SecretValues) {
        for field in headers where self.headers.matches(field.name) {
            secrets.learnHeader(name: field.name, value: field.value, minimumLength: minimumSecretLength)
        }
    }

    /// Remembers the values of sensitive header fields as `URLRequest` holds them: the same
    /// secrets as ``learn(headers:into:)`` of the ``HTTPHeaders`` made from them.
    func learn(headerFields: [String: String], into secrets: inout SecretValues) {
        for (name, value) in headerFields where headers.matches(name) {
            secrets.learnHeader(name: name, value: value, minimumLength: minimumSecretLength)
        }
    }

    /// Remembers the secrets of a request that was sent: the values of its sensitive header fields,
    /// query parameters and user info, and of the sensitive JSON keys or form fields of (up to
    /// 1 MiB of) its body — what an error text must not repeat when the server echoes them.
    func learn(request: URLRequest, into secrets: inout SecretValues) {
        let headers = HTTPHeaders(request)
        learn(headers: headers, into: &secrets)
        if let url = request.url { _ = redact(url: url.absoluteString, learning: &secrets) }
        if let body = request.httpBody { learn(body: body, contentType: headers["Content-Type"], into: &secrets) }
    }

    /// Remembers the values of sensitive JSON keys or form fields in (up to 1 MiB of) `body`.
    func learn(body: Data, contentType: String?, into secrets: inout SecretValues) {
        guard !body.isEmpty else { return }
        let bytes = Array(body.prefix(Self.learningLimit))
        let mediaType = Self.mediaType(of: contentType)
        var found: [String] = []
        switch BodyKind.classify(mediaType: mediaType, bytes: bytes.prefix(512)) {
        case .json:
            found = jsonRedaction.redact(bytes).secrets
        case .form:
            _ = FormRedaction.redact(String(decoding: bytes, as: UTF8.self), names: bodyFields, marker: marker, secrets: &found)
        case .text, .binary:
            return
        }
        for value in found { secrets.insert(value, minimumLength: minimumSecretLength) }
    }

    // MARK: Redaction with learned secrets

    /// Header fields whose value is a URL, redacted like one (an OAuth redirect's `Location`
    /// carries `code` or `access_token` in its query).
    static let urlValuedHeaders: Set<String> = ["location", "content-location", "referer"]

    /// Redacts header fields, scrubbing non-sensitive values of `secrets`.
    func redact(_ headers: HTTPHeaders, secrets: SecretValues) -> HTTPHeaders {
        HTTPHeaders(
            headers.map { field in
                if self.headers.matches(field.name) {
                    return HTTPHeaders.Field(name: field.name, value: redactedValue(ofHeader: field.name, value: field.value))
                }
                var value = field.value
                let name = field.name.lowercased()
                if Self.urlValuedHeaders.contains(name) {
                    var ignored: [String] = []
                    value = FormRedaction.redactURL(value, names: queryParameters, marker: marker, secrets: &ignored)
                } else if name == "link" {
                    value = redactedLinkTargets(value)
                } else if name == "refresh" {
                    value = redactedRefreshTarget(value)
                }
                return HTTPHeaders.Field(name: field.name, value: secrets.scrub(value, marker: marker))
            })
    }

    /// A `Link` field (RFC 8288 §3) with each `<URI-Reference>` redacted like a URL: a paginated
    /// API's `rel="next"` link may carry the caller's `access_token` or a signed cursor.
    func redactedLinkTargets(_ value: String) -> String {
        guard value.contains("<") else { return value }
        var result = ""
        var rest = Substring(value)
        var ignored: [String] = []
        while let open = rest.firstIndex(of: "<"), let close = rest[open...].firstIndex(of: ">") {
            result += rest[...open]
            result += FormRedaction.redactURL(
                String(rest[rest.index(after: open)..<close]), names: queryParameters, marker: marker, secrets: &ignored)
            rest = rest[close...]
        }
        return result + rest
    }

    /// A `Refresh` field (`5; url=https://…`, HTML's `http-equiv` refresh sent as a header) with
    /// its target redacted like a URL: a sign-in page may send the browser on with a token in it.
    func redactedRefreshTarget(_ value: String) -> String {
        guard let range = value.range(of: "url=", options: .caseInsensitive) else { return value }
        var target = value[range.upperBound...]
        var closing: Substring = ""
        // A quoted target (`url='…'`) keeps its quotes and whatever follows them.
        if let quote = target.first, quote == "'" || quote == "\"" {
            target = target.dropFirst()
            let end = target.firstIndex(of: quote) ?? target.endIndex
            closing = target[end...]
            target = target[..<end]
        }
        var ignored: [String] = []
        let redacted = FormRedaction.redactURL(String(target), names: queryParameters, marker: marker, secrets: &ignored)
        return String(value[..<target.startIndex]) + redacted + closing
    }

    /// What a sensitive header shows: its structure without its secrets.
    func redactedValue(ofHeader name: String, value: String) -> String {
        switch name.lowercased() {
        case "cookie":
            let names = value.split(separator: ";").compactMap { pair -> String? in
                // A pair without `=` is a nameless cookie: all of it is the value.
                guard pair.contains("=") else { return nil }
                let name = pair.split(separator: "=", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) }
                guard let name, !name.isEmpty else { return nil }
                return "\(name)=\(marker)"
            }
            return names.isEmpty ? marker : names.joined(separator: "; ")
        case "set-cookie":
            let parts = value.split(separator: ";", omittingEmptySubsequences: false)
            guard let first = parts.first, let equals = first.firstIndex(of: "=") else { return marker }
            let name = first[..<equals].trimmingCharacters(in: .whitespaces)
            return ([name + "=" + marker] + parts.dropFirst().map(String.init)).joined(separator: ";")
        default:
            // Keep the auth scheme of `Authorization` and `Proxy-Authorization` (`Bearer`,
            // `Basic`, RFC 9110 §11.4): it is not secret and tells which kind of credential was
            // sent. Another field's first word may be part of the secret (a passphrase).
            let parts = value.split(separator: " ", maxSplits: 1)
            let isCredentials = ["authorization", "proxy-authorization"].contains(name.lowercased())
            if isCredentials, parts.count == 2, parts[0].count <= 20, parts[0].allSatisfy({ $0.isLetter || $0 == "-" }) {
                return "\(parts[0]) \(marker)"
            }
            return marker
        }
    }

    /// Redacts a URL's text, learning the hidden values, then scrubs it of every learned value.
    func redact(url: String, learning secrets: inout SecretValues) -> String {
        var found: [String] = []
        let redacted = FormRedaction.redactURL(
            url, names: queryParameters, json: jsonRedaction, marker: marker, secrets: &found)
        for value in found { secrets.insert(value, minimumLength: minimumSecretLength) }
        return secrets.scrub(redacted, marker: marker)
    }

    /// Scrubs free text (an error message, a URL) of learned secrets.
    func scrub(_ text: String, secrets: SecretValues) -> String {
        secrets.scrub(text, marker: marker)
    }

    /// The redacted preview of `body`: structural redaction of the first `limit` bytes, then
    /// scrubbing of learned secrets, then removal of a secret cut in half at the end.
    func preview(of body: Data, contentType: String?, limit: Int, secrets: inout SecretValues) -> BodyPreview? {
        guard !body.isEmpty else { return nil }
        let mediaType = Self.mediaType(of: contentType)
        let kind = BodyKind.classify(mediaType: mediaType, bytes: body.prefix(512))
        guard kind != .binary else { return .binary(size: body.count, contentType: contentType) }

        if body.count > limit { learn(body: body, contentType: contentType, into: &secrets) }
        // One byte past the limit lets the prefix see whether the cut splits a character.
        let head = Array(body.prefix(limit < body.count ? limit + 1 : body.count))
        let prefix = UTF8Text.prefix(head, limit: limit)
        // A body labelled as text or JSON that is not valid UTF-8 is still shown (a server's
        // Latin-1 error page, a cut character): bad bytes become U+FFFD and the preview says so.
        // Unlabelled bytes that are not UTF-8 are binary.
        let invalidUTF8 = !UTF8Text.isValid(prefix)
        if invalidUTF8, mediaType == nil { return .binary(size: body.count, contentType: contentType) }
        let truncated = prefix.count < body.count

        var found: [String] = []
        var text: String
        switch kind {
        case .json:
            let result = jsonRedaction.redact(Array(prefix))
            found = result.secrets
            text = String(decoding: result.output, as: UTF8.self)
        case .form:
            text = FormRedaction.redact(
                String(decoding: prefix, as: UTF8.self), names: bodyFields, marker: marker, secrets: &found)
        case .text, .binary:
            text = String(decoding: prefix, as: UTF8.self)
        }
        for value in found { secrets.insert(value, minimumLength: minimumSecretLength) }
        text = secrets.scrub(text, marker: marker)
        if truncated { text = secrets.trimTrailingPartial(text) }
        if invalidUTF8 { text += Self.invalidUTF8Note }
        return .text(text, truncated: truncated)
    }

    /// Appended to the preview of a text body that is not valid UTF-8.
    static let invalidUTF8Note = " <not valid UTF-8: invalid bytes shown as U+FFFD>"

    private var jsonRedaction: JSONRedaction {
        JSONRedaction(isSensitive: { [bodyFields] in bodyFields.matches($0) }, marker: marker)
    }

    /// The media type of a `Content-Type` value: before any `;`, trimmed, lower-cased.
    static func mediaType(of contentType: String?) -> String? {
        guard let contentType else { return nil }
        let type = contentType.split(separator: ";", maxSplits: 1).first.map(String.init) ?? contentType
        let trimmed = type.trimmingCharacters(in: .whitespaces).lowercased()
        return trimmed.isEmpty ? nil : trimmed
    }
}
