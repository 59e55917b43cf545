import Foundation

/// The one-line calls for an absolute `URL` (another host, a pre-signed link, a `Location` header)
/// instead of a path relative to the environment. Policy, decoding and errors are the same.
extension APIClient {
    /// `GET url` decoded as `T`.
    /// - Throws: ``NetworkError``; ``NetworkError/invalidRequest(_:)`` for a non-http(s) URL.
    public func get<T: Decodable & Sendable>(_ url: URL, query: Query = Query(), policy: EndpointPolicy = .standard) async throws -> T {
        try await get(url.absoluteString, query: query, policy: policy)
    }

    /// `POST url` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func post<T: Decodable & Sendable>(_ url: URL, body: (any Encodable & Sendable)? = nil, policy: EndpointPolicy = .standard) async throws -> T {
        try await post(url.absoluteString, body: body, policy: policy)
    }

    /// `POST url` with an optional JSON body; the response body is ignored.
    /// - Throws: ``NetworkError``.
    public func post(_ url: URL, body: (any Encodable & Sendable)? = nil, policy: EndpointPolicy = .standard) async throws {
        try await post(url.absoluteString, body: body, policy: policy)
    }

    /// `PUT url` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func put<T: Decodable & Sendable>(_ url: URL, body: (any Encodable & Sendable)? = nil, policy: EndpointPolicy = .standard) async throws -> T {
        try await put(url.absoluteString, body: body, policy: policy)
    }

    /// `PATCH url` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func patch<T: Decodable & Sendable>(_ url: URL, body: (any Encodable & Sendable)? = nil, policy: EndpointPolicy = .standard) async throws -> T {
        try await patch(url.absoluteString, body: body, policy: policy)
    }

    /// `DELETE url`; the response body is ignored.
    /// - Throws: ``NetworkError``.
    public func delete(_ url: URL, policy: EndpointPolicy = .standard) async throws {
        try await delete(url.absoluteString, policy: policy)
    }
}
