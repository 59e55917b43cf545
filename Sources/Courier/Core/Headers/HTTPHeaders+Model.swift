import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPHeaders {
    /// Header fields from a model: one field per non-nil property, named by its coding key.
    ///
    /// ```swift
    /// struct ClientHeaders: Encodable {
    ///     var appVersion: String
    ///     var deviceID: UUID?
    ///     enum CodingKeys: String, CodingKey { case appVersion = "X-App-Version", deviceID = "X-Device-ID" }
    /// }
    /// let headers = try HTTPHeaders(encoding: ClientHeaders(appVersion: "4.2", deviceID: nil))
    /// // X-App-Version: 4.2   (no X-Device-ID field)
    /// let client = APIClient(environment: .production) { $0.headers = headers }
    /// ```
    ///
    /// Values may be `String`, `Bool`, integers, finite numbers, `Decimal`, `URL`, `UUID`, `Date`
    /// (IMF-fixdate, RFC 9110 §5.6.7) or a `RawRepresentable` of those. Names must be RFC 9110
    /// §5.6.2 tokens; values must be US-ASCII without control characters or surrounding
    /// whitespace (RFC 9110 §5.5).
    ///
    /// - Throws: ``HeaderFieldError``: ``HeaderFieldError/invalidValue(field:problem:)`` for CR/LF
    ///   (an injection attempt) and other unsafe text, ``HeaderFieldError/invalidName(_:)``,
    ///   ``HeaderFieldError/unsupportedValue(field:type:)`` for nested objects and arrays,
    ///   ``HeaderFieldError/notAModel(type:)``, ``HeaderFieldError/duplicateField(_:)``.
    public init(encoding model: some Encodable) throws {
        self = try HeaderModelEncoder().encode(model)
    }

    /// Replaces the fields named by `other` with `other`'s fields (each name replaced as a whole).
    mutating func replaceFields(with other: HTTPHeaders) {
        for field in other { remove(field.name) }
        for field in other { add(field.name, field.value) }
    }
}

extension Request {
    /// A copy with header fields from `model` (see ``HTTPHeaders/init(encoding:)``); each field
    /// replaces a request field of the same name. Per-request fields win over the client's and the
    /// environment's.
    ///
    /// - Throws: ``HeaderFieldError``.
    public func headers(from model: some Encodable) throws -> Request {
        var copy = self
        copy.headers.replaceFields(with: try HTTPHeaders(encoding: model))
        return copy
    }
}

/// Adds header fields made from a model to every request, the model being produced per request —
/// the seed's "fill headers from a Codable model" for values that change (an app version, a
/// locale, a feature flag). Fields the request already has (from the endpoint) win.
///
/// ```swift
/// struct Headers: Encodable {
///     var acceptLanguage: String
///     enum CodingKeys: String, CodingKey { case acceptLanguage = "Accept-Language" }
/// }
/// let client = APIClient(environment: .production) {
///     $0.interceptors.insert(ModelHeadersInterceptor { Headers(acceptLanguage: Locale.current.identifier) }, at: 1)
/// }
/// ```
///
/// A model that cannot become header fields fails the call with
/// ``NetworkError/invalidRequest(_:)`` naming the field; nothing is sent.
public struct ModelHeadersInterceptor: Interceptor {
    private let makeModel: @Sendable () async throws -> (any Encodable)?

    /// Creates the interceptor; `model` is called once per attempt (`nil`: no fields).
    public init(_ model: @escaping @Sendable () async throws -> (any Encodable)?) {
        self.makeModel = model
    }

    /// - Throws: ``NetworkError/invalidRequest(_:)`` when the model's fields are not valid header
    ///   fields; whatever the model closure or `next` throws.
    public func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        guard let model = try await makeModel() else { return try await next(request) }
        let fields: HTTPHeaders
        do {
            fields = try HTTPHeaders(encoding: model)
        } catch let error as HeaderFieldError {
            throw NetworkError.invalidRequest(error.description)
        }
        var request = request
        for field in fields where request.value(forHTTPHeaderField: field.name) == nil {
            request.addValue(field.value, forHTTPHeaderField: field.name)
        }
        return try await next(request)
    }
}
