import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One API operation as a type: where it goes, what it sends, what comes back, and the policy it
/// runs under. An API area's endpoints read like its documentation.
///
/// ```swift
/// struct GetItem: Endpoint {
///     typealias Response = Item
///     let id: Int
///     var path: String { "/items/\(id)" }
///     var pathTemplate: String? { "/items/{id}" }
///     var policy: EndpointPolicy { .authorizedRead }
///     var knownErrors: [Int: String] { [404: "This item was removed."] }
/// }
/// let item = try await client.send(GetItem(id: 42))
/// ```
///
/// Only ``path`` is required. `Response` may be any `Decodable` (decoded as JSON with the client's
/// decoder; `Optional` gives `nil` on an empty body), ``EmptyResponse`` or `Void` for no content, or
/// ``HTTPResponse`` for raw access.
public protocol Endpoint: Sendable {
    /// What a successful call returns.
    associatedtype Response: Sendable

    /// The path relative to the environment's base URL, unencoded, e.g. `/items/42`. Each segment
    /// is percent-encoded by the client (RFC 3986 §3.3), so a `?` or `#` here is sent as `%3F`/`%23`:
    /// put parameters in ``query``. A value from the user (a name, an ID that may hold `/`)
    /// belongs in ``pathValues`` behind a `{name}` placeholder. The empty path adds nothing to the
    /// base URL (no trailing slash). An absolute `http(s)://` URL is used as is; any other
    /// `scheme://` is a ``NetworkError/invalidRequest(_:)``.
    var path: String { get }
    /// Values for `{name}` placeholders in ``path``; none by default. Every `{` in a relative
    /// ``path`` opens a placeholder, with or without values: a path that needs a literal brace
    /// passes it as a value.
    ///
    /// Each value becomes exactly one path segment that decodes to the value, whatever it holds
    /// (`/`, `?`, `#`, `%`, spaces, non-ASCII: RFC 3986 §2.2, §3.3). Pass values as they are,
    /// never pre-encoded: `"a%2Fb"` is sent as `a%252Fb` and arrives as `a%2Fb`. A placeholder
    /// without a value, a value without a placeholder, and a whole-segment value that is empty,
    /// `.` or `..` are ``NetworkError/invalidRequest(_:)``. The path with its placeholders is also
    /// the default ``pathTemplate``.
    ///
    /// ```swift
    /// struct GetFileVersion: Endpoint {
    ///     typealias Response = Data
    ///     let name: String
    ///     let version: Int
    ///     var path: String { "/files/{name}/versions/{version}" }
    ///     var pathValues: [String: String] { ["name": name, "version": String(version)] }
    /// }
    /// ```
    var pathValues: [String: String] { get }
    /// The request method; `GET` by default.
    var method: HTTPMethod { get }
    /// Query parameters, in the order given (or sorted by key for an `Encodable`); none by default.
    var query: Query { get }
    /// Extra header fields for this endpoint; they override the client's default headers.
    var headers: HTTPHeaders { get }
    /// The request body; none by default.
    var body: RequestBody { get }
    /// Auth, retry, deadline, cache, logging and idempotency for this call; ``EndpointPolicy/standard`` by default.
    var policy: EndpointPolicy { get }
    /// Which statuses count as success; ``StatusValidation/successful`` (2xx) by default.
    var statusValidation: StatusValidation { get }
    /// Messages to show per status, e.g. `[409: "An account with this e-mail already exists."]`;
    /// they become ``FailedResponse/message`` and ``NetworkError/userMessage``.
    var knownErrors: [Int: String] { get }
    /// The path with placeholders for metrics and logs, e.g. `/items/{id}`; `nil` uses ``path``
    /// without its query, fragment and user info (an absolute URL keeps its scheme and host).
    var pathTemplate: String? { get }
    /// Per-request tuning (request modifier, decoder or encoder override); none by default.
    var options: RequestOptions { get }

    /// Turns an accepted response into `Response`.
    ///
    /// Default implementations exist for `Decodable`, `Void`, ``EmptyResponse`` and ``HTTPResponse``
    /// responses; implement it for any other format.
    /// - Throws: Any error; the client wraps it in ``NetworkError/decoding(_:)``.
    func decode(_ response: HTTPResponse, context: ResponseDecodingContext) throws -> Response
}

/// Defaults, so an endpoint declares only what differs: GET, no path values, no query, headers or body, the
/// ``EndpointPolicy/standard`` policy, 2xx accepted, no known-error messages, no path template,
/// no per-request options.
extension Endpoint {
    public var method: HTTPMethod { .get }
    public var pathValues: [String: String] { [:] }
    public var query: Query { Query() }
    public var headers: HTTPHeaders { HTTPHeaders() }
    public var body: RequestBody { .none }
    public var policy: EndpointPolicy { .standard }
    public var statusValidation: StatusValidation { .successful }
    public var knownErrors: [Int: String] { [:] }
    public var pathTemplate: String? { nil }
    public var options: RequestOptions { .none }
}

extension Endpoint where Response: Decodable {
    /// Decodes JSON with the client's decoder; see ``ResponseDecodingContext/decodeJSON(_:from:)``.
    public func decode(_ response: HTTPResponse, context: ResponseDecodingContext) throws -> Response {
        try context.decodeJSON(Response.self, from: response)
    }
}

extension Endpoint where Response == Void {
    /// Ignores the body.
    public func decode(_ response: HTTPResponse, context: ResponseDecodingContext) throws {}
}

extension Endpoint where Response == HTTPResponse {
    /// Returns the response as received.
    public func decode(_ response: HTTPResponse, context: ResponseDecodingContext) throws -> HTTPResponse { response }
}

/// Which response statuses a call accepts. Statuses outside the set become a ``NetworkError``.
public enum StatusValidation: Sendable, Hashable {
    /// 200–299.
    case successful
    /// Exactly these statuses, e.g. `[200, 202]`.
    case codes(Set<Int>)
    /// Raw-status mode: every status is returned to the caller (with `Response == HTTPResponse`),
    /// for flows where 409, 429 or 503 is a step rather than an error (polling a job, optimistic
    /// locking). Transport failures still throw.
    case none

    /// Whether `statusCode` is accepted.
    public func accepts(_ statusCode: Int) -> Bool {
        switch self {
        case .successful: return (200..<300).contains(statusCode)
        case .codes(let codes): return codes.contains(statusCode)
        case .none: return true
        }
    }
}
