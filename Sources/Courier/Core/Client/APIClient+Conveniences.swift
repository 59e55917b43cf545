import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One-line calls for endpoints that do not deserve a type. Each returns the decoded value, or
/// `Void` when the result is not needed (204 and empty bodies succeed). The path forms here and
/// the `URL` forms (absolute URLs) take the same parameters.
extension APIClient {
    /// `GET`, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func get<T: Decodable & Sendable>(
        _ path: String, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await send(Request<T>(method: .get, path: path, query: query, headers: headers, body: .none, policy: policy))
    }

    /// `POST` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func post<T: Decodable & Sendable>(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await send(
            Request<T>(
                method: .post, path: path, query: query, headers: headers, body: body.map { .json($0) } ?? .none, policy: policy))
    }

    /// `POST` with an optional JSON body; the response body is ignored (204 succeeds).
    /// - Throws: ``NetworkError``.
    public func post(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws {
        try await send(
            Request<Void>(
                method: .post, path: path, query: query, headers: headers, body: body.map { .json($0) } ?? .none, policy: policy))
    }

    /// `PUT` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func put<T: Decodable & Sendable>(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await send(
            Request<T>(
                method: .put, path: path, query: query, headers: headers, body: body.map { .json($0) } ?? .none, policy: policy))
    }

    /// `PUT` with an optional JSON body; the response body is ignored (204 succeeds).
    /// - Throws: ``NetworkError``.
    public func put(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws {
        try await send(
            Request<Void>(
                method: .put, path: path, query: query, headers: headers, body: body.map { .json($0) } ?? .none, policy: policy))
    }

    /// `PATCH` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func patch<T: Decodable & Sendable>(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await send(
            Request<T>(
                method: .patch, path: path, query: query, headers: headers, body: body.map { .json($0) } ?? .none, policy: policy)
        )
    }

    /// `PATCH` with an optional JSON body; the response body is ignored (204 succeeds).
    /// - Throws: ``NetworkError``.
    public func patch(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws {
        try await send(
            Request<Void>(
                method: .patch, path: path, query: query, headers: headers, body: body.map { .json($0) } ?? .none, policy: policy)
        )
    }

    /// `DELETE`, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func delete<T: Decodable & Sendable>(
        _ path: String, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await send(Request<T>(method: .delete, path: path, query: query, headers: headers, body: .none, policy: policy))
    }

    /// `DELETE`; the response body is ignored (204 succeeds).
    /// - Throws: ``NetworkError``.
    public func delete(
        _ path: String, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws {
        try await send(Request<Void>(method: .delete, path: path, query: query, headers: headers, body: .none, policy: policy))
    }
}
