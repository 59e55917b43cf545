import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends the call's idempotency key as `Idempotency-Key`
/// (IETF draft-ietf-httpapi-idempotency-key-header), so that a server can recognise a repeated
/// POST or PATCH and answer it with the first outcome instead of applying it twice.
///
/// The key comes from ``RequestContext/idempotencyKey``: generated once per logical call for
/// ``IdempotencyPolicy/automatic``, the caller's own for ``IdempotencyPolicy/key(_:)`` (for example
/// a client-assigned order id that survives an app restart). Because the context lives as long as
/// the call, every retry carries the same key. A key the endpoint already set as a header is kept.
///
/// Position: see ``Swift/Array/standard(tokenManager:cache:logger:redactor:recorders:metrics:retry:)``.
public struct IdempotencyInterceptor: Interceptor {
    /// ``PipelineCapabilities/idempotencyKeys``.
    public var capabilities: PipelineCapabilities { .idempotencyKeys }

    /// How the key is written into the header field.
    public enum Encoding: Sendable, Hashable {
        /// The key as is: `Idempotency-Key: 8e03978e-40d5-43e8-bc93-6894a57f9324` — what most
        /// deployed APIs expect.
        case plain
        /// As a Structured Field string (RFC 8941 §3.3.3), which the IETF draft specifies:
        /// `Idempotency-Key: "8e03978e-40d5-43e8-bc93-6894a57f9324"`.
        case structuredString
    }

    /// The header name; `Idempotency-Key` by default.
    package let headerName: String
    /// How the key is written.
    package let encoding: Encoding

    /// Creates the interceptor.
    public init(headerName: String = "Idempotency-Key", encoding: Encoding = .plain) {
        self.headerName = headerName
        self.encoding = encoding
    }

    /// Adds the header when the context has a key. A key the request already carries is kept; a
    /// blank one (empty, or only spaces) is replaced, since it tells no two requests apart.
    ///
    /// - Throws: ``NetworkError/invalidRequest(_:)`` without sending when the key is empty or holds
    ///   characters a header value cannot carry (anything outside visible ASCII and space).
    public func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        guard let key = context.idempotencyKey, !TransportResendRule.hasKey(request, field: headerName) else {
            return try await next(request)
        }
        var request = request
        request.setValue(try Self.fieldValue(for: key, encoding: encoding), forHTTPHeaderField: headerName)
        return try await next(request)
    }

    /// The header value for `key`.
    ///
    /// - Throws: ``NetworkError/invalidRequest(_:)`` when `key` is empty, starts or ends with a
    ///   space, or contains a byte outside 0x20...0x7E (RFC 8941 §3.3.3 sf-string characters).
    static func fieldValue(for key: String, encoding: Encoding) throws -> String {
        let bytes = Array(key.utf8)
        guard !bytes.isEmpty, bytes.allSatisfy({ (0x20...0x7E).contains($0) }),
            bytes.first != 0x20, bytes.last != 0x20
        else {
            throw NetworkError.invalidRequest("the idempotency key must be non-empty visible ASCII")
        }
        switch encoding {
        case .plain:
            return key
        case .structuredString:
            let escaped = key.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            return "\"\(escaped)\""
        }
    }
}
