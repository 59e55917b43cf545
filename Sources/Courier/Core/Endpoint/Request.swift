import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An endpoint as a plain value, for one-off calls that do not deserve a type of their own.
///
/// ```swift
/// let items: [Item] = try await client.send(.get("/items", query: ["status": "active"]))
/// try await client.send(Request<Void>.delete("/items/42"))
/// let created: Item = try await client.send(.post("/items", body: NewItem(name: "Lamp")))
/// ```
public struct Request<Response: Sendable>: Endpoint {
    /// The path relative to the environment's base URL, or an absolute http(s) URL (see ``Endpoint/path``).
    public var path: String
    /// Values for `{name}` placeholders in ``path``, each sent as exactly one segment (see
    /// ``Endpoint/pathValues``); set them with ``pathValue(_:_:)``.
    public var pathValues: [String: String] = [:]
    /// The request method.
    public var method: HTTPMethod
    /// Query parameters (see ``Query``).
    public var query: Query
    /// Extra header fields; they override the client's.
    public var headers: HTTPHeaders
    /// The request body.
    public var body: RequestBody
    /// Auth, retry, deadline, cache, logging and idempotency for this call.
    public var policy: EndpointPolicy
    /// Which statuses count as success; 2xx by default, every status for `raw(_:_:query:headers:body:)`.
    public var statusValidation: StatusValidation
    /// Messages to show per status (see ``addKnownError(_:_:)``).
    public var knownErrors: [Int: String]
    /// The path with placeholders for metrics and logs; `nil` uses ``path``.
    public var pathTemplate: String?
    /// Per-request tuning: request modifier, decoder or encoder override.
    public var options: RequestOptions
    private let decodeBody: @Sendable (HTTPResponse, ResponseDecodingContext) throws -> Response

    /// Creates a request with an explicit decoding function (for non-JSON formats).
    public init(
        method: HTTPMethod = .get,
        path: String,
        query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(),
        body: RequestBody = .none,
        policy: EndpointPolicy = .standard,
        decode: @escaping @Sendable (HTTPResponse, ResponseDecodingContext) throws -> Response
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
        self.policy = policy
        self.statusValidation = .successful
        self.knownErrors = [:]
        self.pathTemplate = nil
        self.options = .none
        self.decodeBody = decode
    }

    public func decode(_ response: HTTPResponse, context: ResponseDecodingContext) throws -> Response {
        try decodeBody(response, context)
    }

    /// A copy whose `{name}` placeholder in the path is replaced by `value` as exactly one
    /// segment: `.get("/files/{name}").pathValue("name", "a/b c")` requests `/files/a%2Fb%20c`.
    public func pathValue(_ name: String, _ value: String) -> Request {
        var copy = self
        copy.pathValues[name] = value
        return copy
    }

    /// A copy that shows `message` for responses with `status` (see ``Endpoint/knownErrors``).
    public func addKnownError(_ status: Int, _ message: String) -> Request {
        var copy = self
        copy.knownErrors[status] = message
        return copy
    }

    /// A copy that accepts exactly `statuses` as success (others become a ``NetworkError``):
    /// `.post("/jobs").expecting(201, 202)`.
    public func expecting(_ statuses: Int...) -> Request {
        var copy = self
        copy.statusValidation = .codes(Set(statuses))
        return copy
    }

    /// A copy that calls `hook` once, when the call's request really leaves for the network — not
    /// for a cache hit or an attempt that fails offline (see ``RequestOptions/onStart``).
    public func onStart(_ hook: @escaping @Sendable () -> Void) -> Request {
        var copy = self
        copy.options.onStart = hook
        return copy
    }

    /// A copy whose response passes through `check` before it is decoded (see
    /// ``RequestOptions/checkResponse``):
    /// `.get("/catalog").checkResponse { guard $0.headers["X-Catalog-Version"] == "3" else { throw StaleCatalog() } }`.
    public func checkResponse(_ check: @escaping @Sendable (HTTPResponse) throws -> Void) -> Request {
        var copy = self
        copy.options.checkResponse = check
        return copy
    }

    /// A copy that handles redirects as `mode` says (see ``RequestOptions/redirects``):
    /// `.get("/oauth/authorize").redirects(.doNotFollow)`.
    public func redirects(_ mode: RedirectMode) -> Request {
        var copy = self
        copy.options.redirects = mode
        return copy
    }

    /// A copy with another policy.
    public func policy(_ policy: EndpointPolicy) -> Request {
        var copy = self
        copy.policy = policy
        return copy
    }

    /// A copy with one more header field (replacing one of the same name).
    public func header(_ name: String, _ value: String) -> Request {
        var copy = self
        copy.headers.replace(name, with: value)
        return copy
    }

    /// A copy whose built `URLRequest` is passed through `modify` (seed: per-request tuner).
    public func modifyRequest(_ modify: @escaping @Sendable (inout URLRequest) -> Void) -> Request {
        var copy = self
        copy.options.modifyRequest = modify
        return copy
    }

    /// A copy decoded with `decoder` instead of the client's.
    public func decoder(_ decoder: JSONDecoder) -> Request {
        var copy = self
        copy.options.decoder = decoder
        return copy
    }

    /// A copy whose JSON body is encoded with `encoder` instead of the client's.
    public func encoder(_ encoder: JSONEncoder) -> Request {
        var copy = self
        copy.options.encoder = encoder
        return copy
    }
}

extension Request where Response: Decodable {
    /// A request whose JSON response decodes into `Response` (`Data`: the raw body bytes).
    public init(
        method: HTTPMethod = .get, path: String, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        body: RequestBody = .none, policy: EndpointPolicy = .standard
    ) {
        self.init(method: method, path: path, query: query, headers: headers, body: body, policy: policy) {
            try $1.decodeJSON(Response.self, from: $0)
        }
    }

    /// `GET path`, decoded as `Response`.
    public static func get(
        _ path: String, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .get, path: path, query: query, headers: headers, body: .none, policy: policy)
    }

    /// `POST path` with an optional JSON body, decoded as `Response`.
    public static func post(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .post, path: path, query: query, headers: headers, body: RequestBody(jsonOrNone: body), policy: policy)
    }

    /// `PUT path` with an optional JSON body, decoded as `Response`.
    public static func put(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .put, path: path, query: query, headers: headers, body: RequestBody(jsonOrNone: body), policy: policy)
    }

    /// `PATCH path` with an optional JSON body, decoded as `Response`.
    public static func patch(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .patch, path: path, query: query, headers: headers, body: RequestBody(jsonOrNone: body), policy: policy)
    }

    /// `DELETE path`, decoded as `Response`.
    public static func delete(
        _ path: String, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .delete, path: path, query: query, headers: headers, body: .none, policy: policy)
    }
}

extension Request where Response == Void {
    /// A request whose response body is ignored (any accepted status succeeds, 204 included).
    public init(
        method: HTTPMethod = .get, path: String, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        body: RequestBody = .none, policy: EndpointPolicy = .standard
    ) {
        self.init(method: method, path: path, query: query, headers: headers, body: body, policy: policy) { _, _ in }
    }

    /// `GET path`, response body ignored.
    public static func get(
        _ path: String, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .get, path: path, query: query, headers: headers, body: .none, policy: policy)
    }

    /// `POST path` with an optional JSON body, response body ignored.
    public static func post(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .post, path: path, query: query, headers: headers, body: RequestBody(jsonOrNone: body), policy: policy)
    }

    /// `PUT path` with an optional JSON body, response body ignored.
    public static func put(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .put, path: path, query: query, headers: headers, body: RequestBody(jsonOrNone: body), policy: policy)
    }

    /// `PATCH path` with an optional JSON body, response body ignored.
    public static func patch(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .patch, path: path, query: query, headers: headers, body: RequestBody(jsonOrNone: body), policy: policy)
    }

    /// `DELETE path`, response body ignored.
    public static func delete(
        _ path: String, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .delete, path: path, query: query, headers: headers, body: .none, policy: policy)
    }

    /// `HEAD path`, response body ignored.
    public static func head(
        _ path: String, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .head, path: path, query: query, headers: headers, body: .none, policy: policy)
    }
}

extension Request where Response == HTTPResponse {
    /// A raw-status request: every status is returned as an ``HTTPResponse`` (see
    /// ``StatusValidation/none``).
    public static func raw(
        _ method: HTTPMethod, _ path: String, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        body: RequestBody = .none, policy: EndpointPolicy = .standard
    ) -> Request {
        var request = Request(method: method, path: path, query: query, headers: headers, body: body, policy: policy) { r, _ in r
        }
        request.statusValidation = .none
        return request
    }
}
