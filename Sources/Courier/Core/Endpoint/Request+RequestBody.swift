import Foundation

// `post`, `put` and `patch` with any `RequestBody`: `.json`, `.form`, `.data`, `.stream`, and the
// bodies of the upload layer (`.file`, `.multipart`). The `Encodable` forms in Request.swift stay
// for the common JSON case; the compiler picks this one for a `RequestBody` value or a
// `RequestBody` case written with a leading dot.

extension Request where Response: Decodable {
    /// `POST path` with `body` (see ``RequestBody``), decoded as `Response`:
    /// `Request<Photo>.post("/photos", body: .file(url, contentType: "image/jpeg"))`.
    ///
    /// - Parameters:
    ///   - path: The path relative to the environment's base URL, or an absolute http(s) URL.
    ///   - body: The body; its `Content-Type` is set unless `headers` has one.
    ///   - query: Query parameters.
    ///   - headers: Extra header fields.
    ///   - policy: Auth, retry, deadline and the rest (e.g. ``EndpointPolicy/authorizedUpload``).
    public static func post(
        _ path: String, body: RequestBody, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .post, path: path, query: query, headers: headers, body: body, policy: policy)
    }

    /// `PUT path` with `body` (see ``RequestBody``), decoded as `Response`.
    ///
    /// - Parameters:
    ///   - path: The path relative to the environment's base URL, or an absolute http(s) URL.
    ///   - body: The body; its `Content-Type` is set unless `headers` has one.
    ///   - query: Query parameters.
    ///   - headers: Extra header fields.
    ///   - policy: Auth, retry, deadline and the rest.
    public static func put(
        _ path: String, body: RequestBody, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .put, path: path, query: query, headers: headers, body: body, policy: policy)
    }

    /// `PATCH path` with `body` (see ``RequestBody``), decoded as `Response`.
    ///
    /// - Parameters:
    ///   - path: The path relative to the environment's base URL, or an absolute http(s) URL.
    ///   - body: The body; its `Content-Type` is set unless `headers` has one.
    ///   - query: Query parameters.
    ///   - headers: Extra header fields.
    ///   - policy: Auth, retry, deadline and the rest.
    public static func patch(
        _ path: String, body: RequestBody, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .patch, path: path, query: query, headers: headers, body: body, policy: policy)
    }
}

extension Request where Response == Void {
    /// `POST path` with `body` (see ``RequestBody``), response body ignored:
    /// `Request<Void>.post("/avatar", body: .data(jpeg, contentType: "image/jpeg"))`.
    ///
    /// - Parameters:
    ///   - path: The path relative to the environment's base URL, or an absolute http(s) URL.
    ///   - body: The body; its `Content-Type` is set unless `headers` has one.
    ///   - query: Query parameters.
    ///   - headers: Extra header fields.
    ///   - policy: Auth, retry, deadline and the rest (e.g. ``EndpointPolicy/authorizedUpload``).
    public static func post(
        _ path: String, body: RequestBody, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .post, path: path, query: query, headers: headers, body: body, policy: policy)
    }

    /// `PUT path` with `body` (see ``RequestBody``), response body ignored.
    ///
    /// - Parameters:
    ///   - path: The path relative to the environment's base URL, or an absolute http(s) URL.
    ///   - body: The body; its `Content-Type` is set unless `headers` has one.
    ///   - query: Query parameters.
    ///   - headers: Extra header fields.
    ///   - policy: Auth, retry, deadline and the rest.
    public static func put(
        _ path: String, body: RequestBody, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .put, path: path, query: query, headers: headers, body: body, policy: policy)
    }

    /// `PATCH path` with `body` (see ``RequestBody``), response body ignored.
    ///
    /// - Parameters:
    ///   - path: The path relative to the environment's base URL, or an absolute http(s) URL.
    ///   - body: The body; its `Content-Type` is set unless `headers` has one.
    ///   - query: Query parameters.
    ///   - headers: Extra header fields.
    ///   - policy: Auth, retry, deadline and the rest.
    public static func patch(
        _ path: String, body: RequestBody, query: Query = Query(),
        headers: HTTPHeaders = HTTPHeaders(), policy: EndpointPolicy = .standard
    ) -> Request {
        Request(method: .patch, path: path, query: query, headers: headers, body: body, policy: policy)
    }
}
