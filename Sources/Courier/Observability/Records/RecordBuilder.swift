import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Makes redacted records for one call, sharing the secret values learned so far through the
/// call's ``RequestContext`` (``LearnedSecretsKey``), so a value hidden in the request is also
/// hidden in the response and in error messages.
struct RecordBuilder {
    let redactor: Redactor
    /// Whether body previews are made (``LoggingPolicy/debugSafe``).
    let includesBodies: Bool

    func request(_ request: URLRequest, context: RequestContext, timestamp: Date = Date()) -> RequestRecord {
        var secrets = context[LearnedSecretsKey.self] ?? SecretValues()
        let headers = HTTPHeaders(request)
        let contentType = headers["Content-Type"]
        redactor.learn(headers: headers, into: &secrets)
        let url = redactor.redact(url: request.url?.absoluteString ?? "", learning: &secrets)
        var preview: BodyPreview?
        if includesBodies, let body = request.httpBody {
            redactor.learn(body: body, contentType: contentType, into: &secrets)
            preview = redactor.preview(of: body, contentType: contentType, limit: redactor.bodyPreviewLimit, secrets: &secrets)
        }
        remember(secrets, in: context)
        let bodySize: Int? = request.httpBody?.count ?? (request.httpBodyStream == nil ? 0 : nil)
        return RequestRecord(
            requestID: context.requestID,
            method: request.httpMethod.map(HTTPMethod.init(rawValue:)) ?? context.method,
            pathTemplate: context.pathTemplate,
            url: redactor.scrub(url, secrets: secrets),
            headers: redactor.redact(headers, secrets: secrets),
            body: preview,
            bodySize: bodySize,
            contentType: contentType,
            attempt: context.attempt + 1,
            timestamp: timestamp)
    }

    func response(_ response: HTTPResponse, context: RequestContext, duration: Duration) -> ResponseRecord {
        var secrets = context[LearnedSecretsKey.self] ?? SecretValues()
        redactor.learn(headers: response.headers, into: &secrets)
        let url = response.url.map { redactor.redact(url: $0.absoluteString, learning: &secrets) }
        let contentType = response.headers["Content-Type"]
        var preview: BodyPreview?
        if includesBodies {
            preview = redactor.preview(
                of: response.body, contentType: contentType, limit: redactor.bodyPreviewLimit, secrets: &secrets)
        }
        remember(secrets, in: context)
        return ResponseRecord(
            requestID: context.requestID,
            statusCode: response.statusCode,
            url: url,
            headers: redactor.redact(response.headers, secrets: secrets),
            body: preview,
            bodySize: response.body.count,
            contentType: contentType,
            duration: duration,
            attempt: max(1, context.attempt))
    }

    func error(_ error: any Error, context: RequestContext, duration: Duration) -> ErrorRecord {
        let secrets = context[LearnedSecretsKey.self] ?? SecretValues()
        let description = ErrorRecord.describe(error)
        return ErrorRecord(
            requestID: context.requestID,
            kind: ErrorRecord.kind(of: error),
            domain: description.domain,
            code: description.code,
            message: redactor.scrub(description.message, secrets: secrets),
            duration: duration,
            attempt: context.attempt)
    }

    private func remember(_ secrets: SecretValues, in context: RequestContext) {
        guard !secrets.isEmpty else { return }
        context.update(LearnedSecretsKey.self, default: SecretValues()) { $0.formUnion(secrets) }
    }
}
