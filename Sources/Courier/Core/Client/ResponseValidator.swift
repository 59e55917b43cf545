import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A check on every accepted response before it is decoded — for servers that answer 200 with an
/// error inside the body, or responses that must carry a header.
public protocol ResponseValidator: Sendable {
    /// Throws when `response` must not be treated as success.
    ///
    /// - Parameters:
    ///   - response: A response whose status the endpoint accepts.
    ///   - context: The call's context.
    /// - Throws: Preferably a ``NetworkError`` (``NetworkError/rejected(_:)`` for error envelopes);
    ///   any other error reaches the caller as ``NetworkError/decoding(_:)``.
    func validate(_ response: HTTPResponse, context: RequestContext) throws
}

/// A validator from a closure.
public struct AnyResponseValidator: ResponseValidator {
    private let body: @Sendable (HTTPResponse, RequestContext) throws -> Void
    /// Wraps `body`.
    public init(_ body: @escaping @Sendable (HTTPResponse, RequestContext) throws -> Void) { self.body = body }
    public func validate(_ response: HTTPResponse, context: RequestContext) throws { try body(response, context) }
}

/// Turns a 2xx JSON body that is really an error into ``NetworkError/rejected(_:)``.
///
/// The body is treated as an error when its top-level `successKey` is `false`, or when it has an
/// `errorKey` whose value is an object or string. The problem's code and message come from
/// `error.code`/`error.message` (or a string `error`), with the secrets of the request that got the
/// answer hidden in them (the values of its secret header fields, query parameters and body fields,
/// by the default ``Redactor``'s lists). Non-JSON bodies and bodies over 1 MiB pass.
public struct ErrorEnvelopeValidator: ResponseValidator {
    /// The boolean success flag, e.g. `ok` in `{"ok": false, …}`; `nil` to ignore.
    public var successKey: String?
    /// The error member, e.g. `error` in `{"error": {"code": …, "message": …}}`.
    public var errorKey: String

    /// Creates the validator for `{"ok": false, "error": {"code", "message"}}`-style envelopes.
    public init(successKey: String? = "ok", errorKey: String = "error") {
        self.successKey = successKey
        self.errorKey = errorKey
    }

    public func validate(_ response: HTTPResponse, context: RequestContext) throws {
        guard !response.data.isEmpty, response.data.count <= 1_048_576,
            let object = (try? JSONSerialization.jsonObject(with: response.data)) as? [String: Any]
        else { return }
        let flaggedFailure = successKey.flatMap { object[$0] as? Bool } == false
        let error = object[errorKey]
        let hasError = error is [String: Any] || error is String
        guard flaggedFailure || hasError else { return }
        var code: String?
        var message: String?
        if let error = error as? [String: Any] {
            code = error["code"] as? String
            message = error["message"] as? String
        } else if let error = error as? String {
            code = error
        }
        // The server's words may repeat what the request sent (its token, a password): hidden, as
        // in a status error's message, with the secrets of the request that got this answer.
        let redactor = Redactor()
        let request = context.lastSentRequest
        var secrets = SecretValues()
        if let request { redactor.learn(request: request, into: &secrets) }
        throw NetworkError.rejected(
            APIProblem(
                code: code.map { redactor.scrub($0, secrets: secrets) },
                message: redactor.scrub(message ?? "The server rejected the request.", secrets: secrets),
                response: FailedResponse(response, knownMessage: nil, redactor: redactor, request: request)))
    }
}
