import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Makes redacted records for one call. The secret values learned so far come in and go out
/// through `secrets`, so a value hidden in the request is also hidden in the response and in
/// error messages; ``RecordJournal`` keeps them for the call and decides when records are built.
///
/// A class, made once per logging interceptor and policy: every journal entry holds one
/// reference instead of a copy of the redactor's many fields.
final class RecordBuilder: Sendable {
    let redactor: Redactor
    /// Whether body previews are made (``LoggingPolicy/debugSafe``).
    let includesBodies: Bool

    init(redactor: Redactor, includesBodies: Bool) {
        self.redactor = redactor
        self.includesBodies = includesBodies
    }

    /// What redacting a request or response learns, in the order a full build would: enough to
    /// render its record later exactly as it would have been (without body previews, which
    /// learn as they render: ``LoggingPolicy/debugSafe`` records are built in one step).
    /// The header fields themselves are not kept: the entry being learned still holds them, and
    /// its record reads them from there.
    struct Learned: Sendable {
        /// The redacted URL, as the record will show it.
        var url: String?
        /// The call's secrets once this entry was learned; what its headers are redacted with.
        var secrets: SecretValues
    }

    /// The learning half of ``request(_:call:attempt:timestamp:secrets:)`` (no body preview). The
    /// header fields are learned as the request holds them, without ordering them into
    /// ``HTTPHeaders``: the secrets learned are the same in any order.
    func learn(_ request: URLRequest, secrets: inout SecretValues, lastURL: inout RedactedURL?) -> Learned {
        if let fields = request.allHTTPHeaderFields { redactor.learn(headerFields: fields, into: &secrets) }
        let url = redact(url: request.url?.absoluteString ?? "", secrets: &secrets, lastURL: &lastURL)
        return Learned(url: redactor.scrub(url, secrets: secrets), secrets: secrets)
    }

    /// A URL's text as ``Redactor/redact(url:learning:)`` made it, with how many secrets the call
    /// knew afterwards.
    struct RedactedURL: Sendable {
        let raw: String
        let redacted: String
        let secretCount: Int
    }

    /// `Redactor.redact(url:learning:)`, reusing the last answer for the same text while no secret
    /// was learned since — the response to a request for the same URL, the usual case, is not
    /// redacted twice. Secrets are only ever added, so an unchanged count is an unchanged set, and
    /// the answer is exactly the one redacting again would give.
    private func redact(url raw: String, secrets: inout SecretValues, lastURL: inout RedactedURL?) -> String {
        if let lastURL, lastURL.secretCount == secrets.count, lastURL.raw == raw { return lastURL.redacted }
        let redacted = redactor.redact(url: raw, learning: &secrets)
        lastURL = RedactedURL(raw: raw, redacted: redacted, secretCount: secrets.count)
        return redacted
    }

    /// The rendering half of ``request(_:call:attempt:timestamp:secrets:)`` (no body preview).
    func render(
        _ learned: Learned, of request: URLRequest, call: RecordJournal.Call, attempt: Int, timestamp: Date
    ) -> RequestRecord {
        let headers = HTTPHeaders(request)
        return RequestRecord(
            requestID: call.requestID,
            method: request.httpMethod.map(HTTPMethod.init(rawValue:)) ?? call.method,
            pathTemplate: redactor.scrub(call.pathTemplate, secrets: learned.secrets),
            url: learned.url ?? "",
            headers: redactor.redact(headers, secrets: learned.secrets),
            body: nil,
            bodySize: request.httpBody?.count ?? (request.httpBodyStream == nil ? 0 : nil),
            contentType: headers["Content-Type"],
            attempt: attempt,
            timestamp: timestamp)
    }

    /// The learning half of ``response(_:call:attempt:duration:secrets:)`` (no body preview).
    func learn(_ response: HTTPResponse, secrets: inout SecretValues, lastURL: inout RedactedURL?) -> Learned {
        redactor.learn(headers: response.headers, into: &secrets)
        let url = response.url.map { redact(url: $0.absoluteString, secrets: &secrets, lastURL: &lastURL) }
        return Learned(url: url, secrets: secrets)
    }

    /// The rendering half of ``response(_:call:attempt:duration:secrets:)`` (no body preview).
    func render(
        _ learned: Learned, of response: HTTPResponse, call: RecordJournal.Call, attempt: Int, duration: Duration
    ) -> ResponseRecord {
        ResponseRecord(
            requestID: call.requestID,
            statusCode: response.statusCode,
            url: learned.url,
            headers: redactor.redact(response.headers, secrets: learned.secrets),
            body: nil,
            bodySize: response.data.count,
            contentType: response.headers["Content-Type"],
            duration: duration,
            attempt: attempt)
    }

    func request(
        _ request: URLRequest, call: RecordJournal.Call, attempt: Int, timestamp: Date, secrets: inout SecretValues
    ) -> RequestRecord {
        let headers = HTTPHeaders(request)
        let contentType = headers["Content-Type"]
        redactor.learn(headers: headers, into: &secrets)
        let url = redactor.redact(url: request.url?.absoluteString ?? "", learning: &secrets)
        var preview: BodyPreview?
        if includesBodies, let body = request.httpBody {
            redactor.learn(body: body, contentType: contentType, into: &secrets)
            preview = redactor.preview(of: body, contentType: contentType, limit: redactor.bodyPreviewLimit, secrets: &secrets)
        }
        let bodySize: Int? = request.httpBody?.count ?? (request.httpBodyStream == nil ? 0 : nil)
        return RequestRecord(
            requestID: call.requestID,
            method: request.httpMethod.map(HTTPMethod.init(rawValue:)) ?? call.method,
            // A call without a template is named by its path, which may hold a secret the
            // exchange shows elsewhere (`DELETE /tokens/<the bearer token>`).
            pathTemplate: redactor.scrub(call.pathTemplate, secrets: secrets),
            url: redactor.scrub(url, secrets: secrets),
            headers: redactor.redact(headers, secrets: secrets),
            body: preview,
            bodySize: bodySize,
            contentType: contentType,
            attempt: attempt,
            timestamp: timestamp)
    }

    func response(
        _ response: HTTPResponse, call: RecordJournal.Call, attempt: Int, duration: Duration, secrets: inout SecretValues
    ) -> ResponseRecord {
        redactor.learn(headers: response.headers, into: &secrets)
        let url = response.url.map { redactor.redact(url: $0.absoluteString, learning: &secrets) }
        let contentType = response.headers["Content-Type"]
        var preview: BodyPreview?
        if includesBodies {
            preview = redactor.preview(
                of: response.data, contentType: contentType, limit: redactor.bodyPreviewLimit, secrets: &secrets)
        }
        return ResponseRecord(
            requestID: call.requestID,
            statusCode: response.statusCode,
            url: url,
            headers: redactor.redact(response.headers, secrets: secrets),
            body: preview,
            bodySize: response.data.count,
            contentType: contentType,
            duration: duration,
            attempt: attempt)
    }

    func error(
        _ error: any Error, call: RecordJournal.Call, attempt: Int, duration: Duration, secrets: SecretValues
    ) -> ErrorRecord {
        let description = ErrorRecord.describe(error)
        return ErrorRecord(
            requestID: call.requestID,
            kind: ErrorRecord.kind(of: error),
            domain: description.domain,
            code: description.code,
            message: redactor.scrub(description.message, secrets: secrets),
            duration: duration,
            attempt: attempt)
    }
}
