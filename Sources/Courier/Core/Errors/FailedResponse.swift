import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A summary of an HTTP response whose status was not accepted: enough for the UI and for logs,
/// bounded in size.
public struct FailedResponse: Sendable, Hashable, CustomStringConvertible {
    /// The status code.
    public var statusCode: Int
    /// The media type of `Content-Type`, e.g. `text/html`, lower-cased, without parameters.
    public var contentType: String?
    /// The response header fields.
    public var headers: HTTPHeaders
    /// The first `bodyLimit` bytes of the body.
    public var body: Data
    /// The first 512 bytes of the body as text, redacted like a log (secret JSON and form fields
    /// hidden), whitespace collapsed; a binary body is summarised by its size and type.
    public var snippet: String
    /// The message to show: the endpoint's known-error message for this status, else a message the
    /// server put in a JSON body (`error.message`, `message`, `detail`, `error_description`,
    /// `title`) made one displayable line (control and bidirectional formatting characters
    /// removed, whitespace collapsed, at most 300 characters, cut with "…"), else `nil`.
    public var message: String?
    /// The endpoint's declared message for this status (``Endpoint/knownErrors``), which
    /// ``NetworkError/userMessage`` shows before anything else.
    package var knownMessage: String?
    /// The server's machine-readable error code from a JSON body (`error.code`, `code`, or a string
    /// `error`), when present; a secret of the request it repeats is hidden, as in ``message``.
    public var code: String?
    /// The server's `Retry-After` (RFC 9110 §10.2.3) — how long it asked the client to wait,
    /// typically on a 429 or 503 — when the response carried a valid one.
    public var retryAfter: RetryAfter?
    /// The URL that answered, when the transport reported it: the last hop of a followed
    /// redirect, or a token endpoint whose failure the auth step passed on.
    public var url: URL?

    /// Largest number of body bytes kept, in bytes (64 KiB).
    package static let bodyLimit = 64 * 1024

    /// Summarises `response`.
    ///
    /// - Parameters:
    ///   - response: The response whose status is not accepted.
    ///   - knownMessage: The endpoint's declared message for this status, which wins over the
    ///     server's.
    public init(_ response: HTTPResponse, knownMessage: String? = nil) {
        self.init(response, knownMessage: knownMessage, redactor: Redactor(), request: nil)
    }

    /// Summarises `response`, hiding what `redactor` (the client's) hides and the secrets of
    /// `request` (the request that got the answer: its secret header fields, query parameters and
    /// body fields) in ``snippet`` and the server's ``message``, and `hiding`'s values too.
    package init(
        _ response: HTTPResponse, knownMessage: String?, redactor: Redactor, request: URLRequest?, hiding: [String] = []
    ) {
        statusCode = response.statusCode
        contentType = response.mediaType
        headers = response.headers
        body = response.data.prefix(Self.bodyLimit)
        // Redacted like a log (secret JSON and form fields, token-looking values, the request's
        // own secrets): the snippet reaches descriptions and logs; the raw bytes stay in `body`
        // for the app to parse.
        var secrets = SecretValues()
        for value in hiding { secrets.insert(value, minimumLength: redactor.minimumSecretLength) }
        if let request { redactor.learn(request: request, into: &secrets) }
        let preview = redactor.preview(
            of: response.data, contentType: response.headers["Content-Type"], limit: 512, secrets: &secrets)
        snippet = (preview?.text ?? preview.map(String.init(describing:)) ?? "")
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
        let details = ErrorBodyParser.parse(response)
        self.knownMessage = knownMessage
        message = knownMessage ?? details.message.map { redactor.scrub($0, secrets: secrets) }
        code = details.code.map { redactor.scrub($0, secrets: secrets) }
        retryAfter = RetryAfter(response: response)
        url = response.url
    }

    /// The authentication challenges of the response's `WWW-Authenticate` fields (RFC 9110
    /// §11.6.1), e.g. the `scope` a 403 `insufficient_scope` asks for (RFC 6750 §3.1); empty when
    /// there are none.
    public var challenges: [AuthenticationChallenge] { AuthenticationChallenge.challenges(in: headers) }

    public var description: String {
        var text = "HTTP \(statusCode)"
        if let contentType { text += " (\(contentType))" }
        if let code { text += " code=\(code)" }
        if let message { text += " \"\(message)\"" } else if !snippet.isEmpty { text += " body: \(snippet.prefix(120))" }
        return text
    }
}

extension FailedResponse: CustomReflectable {
    /// What `dump(_:)` and `Mirror(reflecting:)` show: the summary with the header fields and URL
    /// redacted by the default ``Redactor`` (`Set-Cookie: sid=<redacted>`) and the body by its
    /// size — its redacted text is ``snippet``. The properties themselves keep what was received.
    public var customMirror: Mirror {
        let redactor = Redactor()
        return Mirror(
            self,
            children: [
                "statusCode": statusCode, "contentType": contentType as Any, "headers": redactor.redact(headers),
                "body": "\(body.count) bytes", "snippet": snippet, "message": message as Any, "code": code as Any,
                "retryAfter": retryAfter as Any, "url": url.map(redactor.redact(url:)) as Any,
            ], displayStyle: .struct)
    }
}

/// A 422 response's validation details.
public struct ValidationProblem: Sendable, Hashable, CustomStringConvertible {
    /// The overall message (the endpoint's known-error message, the server's, or a generic one).
    public var message: String
    /// Messages per field, e.g. `["name": ["must not be empty"]]`, read from `error.fields`,
    /// `fields` or `errors` objects in the JSON body.
    public var fieldErrors: [String: [String]]
    /// The response summary.
    public var response: FailedResponse

    /// Builds the problem from a 422 response; the field messages are scrubbed of the secrets of
    /// `request` (the request that got the answer) as `redactor` finds them — a server that
    /// repeats the rejected password in its message does not put it in a log.
    package init(_ response: FailedResponse, redactor: Redactor = Redactor(), request: URLRequest? = nil) {
        self.response = response
        self.message = response.message ?? "The request was not valid."
        var secrets = SecretValues()
        if let request { redactor.learn(request: request, into: &secrets) }
        self.fieldErrors = ErrorBodyParser.fieldErrors(in: response.body).mapValues { messages in
            messages.map { redactor.scrub($0, secrets: secrets) }
        }
    }

    public var description: String {
        let fields = fieldErrors.keys.sorted().map { "\($0): \(fieldErrors[$0]?.joined(separator: "; ") ?? "")" }
        return fields.isEmpty ? message : "\(message) (\(fields.joined(separator: ", ")))"
    }
}

/// An application-level error the server reported inside a 2xx body.
public struct APIProblem: Sendable, Hashable, CustomStringConvertible {
    /// The server's error code, e.g. `insufficient_funds`.
    public var code: String?
    /// The server's message.
    public var message: String
    /// The response that carried it.
    public var response: FailedResponse

    /// Creates a problem.
    public init(code: String?, message: String, response: FailedResponse) {
        self.code = code
        self.message = message
        self.response = response
    }

    public var description: String { "\(code ?? "error"): \(message) (HTTP \(response.statusCode))" }
}
