import Foundation

/// The one-line calls for an absolute `URL` (another host, a pre-signed link, a `Location` header)
/// instead of a path relative to the environment. Policy, decoding and errors are the same.
///
/// Every one throws ``NetworkError/invalidRequest(_:)`` without sending anything when `url` is not
/// an absolute `http`/`https` URL with a host (`ftp:`, `file:`, `mailto:`, a relative URL).
extension APIClient {
    /// `GET url` decoded as `T`.
    /// - Throws: ``NetworkError``; ``NetworkError/invalidRequest(_:)`` for a non-http(s) URL.
    public func get<T: Decodable & Sendable>(_ url: URL, query: Query = Query(), policy: EndpointPolicy = .standard) async throws -> T {
        try await get(try Self.absoluteHTTPString(url), query: query, policy: policy)
    }

    /// `POST url` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func post<T: Decodable & Sendable>(_ url: URL, body: (any Encodable & Sendable)? = nil, policy: EndpointPolicy = .standard) async throws -> T {
        try await post(try Self.absoluteHTTPString(url), body: body, policy: policy)
    }

    /// `POST url` with an optional JSON body; the response body is ignored.
    /// - Throws: ``NetworkError``.
    public func post(_ url: URL, body: (any Encodable & Sendable)? = nil, policy: EndpointPolicy = .standard) async throws {
        try await post(try Self.absoluteHTTPString(url), body: body, policy: policy)
    }

    /// `PUT url` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func put<T: Decodable & Sendable>(_ url: URL, body: (any Encodable & Sendable)? = nil, policy: EndpointPolicy = .standard) async throws -> T {
        try await put(try Self.absoluteHTTPString(url), body: body, policy: policy)
    }

    /// `PATCH url` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func patch<T: Decodable & Sendable>(_ url: URL, body: (any Encodable & Sendable)? = nil, policy: EndpointPolicy = .standard) async throws -> T {
        try await patch(try Self.absoluteHTTPString(url), body: body, policy: policy)
    }

    /// `DELETE url`; the response body is ignored.
    /// - Throws: ``NetworkError``.
    public func delete(_ url: URL, policy: EndpointPolicy = .standard) async throws {
        try await delete(try Self.absoluteHTTPString(url), policy: policy)
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
