import Foundation

/// The one-line calls for an absolute `URL` (another host, a pre-signed link, a `Location` header)
/// instead of a path relative to the environment. Policy, decoding and errors are the same.
///
/// Every one throws ``NetworkError/invalidRequest(_:)`` without sending anything when `url` is not
/// an absolute `http`/`https` URL with a host (`ftp:`, `file:`, `mailto:`, a relative URL).
extension APIClient {
    /// `GET`, decoded as `T`.
    /// - Throws: ``NetworkError``; ``NetworkError/invalidRequest(_:)`` for a URL that is not absolute http(s).
    public func get<T: Decodable & Sendable>(
        _ url: URL, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await get(try Self.absoluteHTTPString(url), query: query, headers: headers, policy: policy)
    }

    /// `POST` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``; ``NetworkError/invalidRequest(_:)`` for a URL that is not absolute http(s).
    public func post<T: Decodable & Sendable>(
        _ url: URL, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await post(try Self.absoluteHTTPString(url), body: body, query: query, headers: headers, policy: policy)
    }

    /// `POST` with an optional JSON body; the response body is ignored (204 succeeds).
    /// - Throws: ``NetworkError``; ``NetworkError/invalidRequest(_:)`` for a URL that is not absolute http(s).
    public func post(
        _ url: URL, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws {
        try await post(try Self.absoluteHTTPString(url), body: body, query: query, headers: headers, policy: policy)
    }

    /// `PUT` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``; ``NetworkError/invalidRequest(_:)`` for a URL that is not absolute http(s).
    public func put<T: Decodable & Sendable>(
        _ url: URL, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await put(try Self.absoluteHTTPString(url), body: body, query: query, headers: headers, policy: policy)
    }

    /// `PUT` with an optional JSON body; the response body is ignored (204 succeeds).
    /// - Throws: ``NetworkError``; ``NetworkError/invalidRequest(_:)`` for a URL that is not absolute http(s).
    public func put(
        _ url: URL, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws {
        try await put(try Self.absoluteHTTPString(url), body: body, query: query, headers: headers, policy: policy)
    }

    /// `PATCH` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``; ``NetworkError/invalidRequest(_:)`` for a URL that is not absolute http(s).
    public func patch<T: Decodable & Sendable>(
        _ url: URL, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await patch(try Self.absoluteHTTPString(url), body: body, query: query, headers: headers, policy: policy)
    }

    /// `PATCH` with an optional JSON body; the response body is ignored (204 succeeds).
    /// - Throws: ``NetworkError``; ``NetworkError/invalidRequest(_:)`` for a URL that is not absolute http(s).
    public func patch(
        _ url: URL, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws {
        try await patch(try Self.absoluteHTTPString(url), body: body, query: query, headers: headers, policy: policy)
    }

    /// `DELETE`, decoded as `T`.
    /// - Throws: ``NetworkError``; ``NetworkError/invalidRequest(_:)`` for a URL that is not absolute http(s).
    public func delete<T: Decodable & Sendable>(
        _ url: URL, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await delete(try Self.absoluteHTTPString(url), query: query, headers: headers, policy: policy)
    }

    /// `DELETE`; the response body is ignored (204 succeeds).
    /// - Throws: ``NetworkError``; ``NetworkError/invalidRequest(_:)`` for a URL that is not absolute http(s).
    public func delete(
        _ url: URL, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws {
        try await delete(try Self.absoluteHTTPString(url), query: query, headers: headers, policy: policy)
    }

    /// `url` as the string an endpoint path takes for an absolute URL.
    /// - Throws: ``NetworkError/invalidRequest(_:)`` unless `url` is an absolute http(s) URL with a host.
    static func absoluteHTTPString(_ url: URL) throws -> String {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty
        else { throw NetworkError.invalidRequest("'\(url.absoluteString)' is not an absolute http(s) URL") }
        return url.absoluteString
    }
}
