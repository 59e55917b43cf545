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
        try await send(Request<T>.get(path, query: query, headers: headers, policy: policy))
    }

    /// `POST` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func post<T: Decodable & Sendable>(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await send(Request<T>.post(path, body: body, query: query, headers: headers, policy: policy))
    }

    /// `POST` with an optional JSON body; the response body is ignored (204 succeeds).
    /// - Throws: ``NetworkError``.
    public func post(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws {
        try await send(Request<Void>.post(path, body: body, query: query, headers: headers, policy: policy))
    }

    /// `PUT` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func put<T: Decodable & Sendable>(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await send(Request<T>.put(path, body: body, query: query, headers: headers, policy: policy))
    }

    /// `PUT` with an optional JSON body; the response body is ignored (204 succeeds).
    /// - Throws: ``NetworkError``.
    public func put(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws {
        try await send(Request<Void>.put(path, body: body, query: query, headers: headers, policy: policy))
    }

    /// `PATCH` with an optional JSON body, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func patch<T: Decodable & Sendable>(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await send(Request<T>.patch(path, body: body, query: query, headers: headers, policy: policy))
    }

    /// `PATCH` with an optional JSON body; the response body is ignored (204 succeeds).
    /// - Throws: ``NetworkError``.
    public func patch(
        _ path: String, body: (any Encodable & Sendable)? = nil, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws {
        try await send(Request<Void>.patch(path, body: body, query: query, headers: headers, policy: policy))
    }

    /// `DELETE`, decoded as `T`.
    /// - Throws: ``NetworkError``.
    public func delete<T: Decodable & Sendable>(
        _ path: String, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws -> T {
        try await send(Request<T>.delete(path, query: query, headers: headers, policy: policy))
    }

    /// `DELETE`; the response body is ignored (204 succeeds).
    /// - Throws: ``NetworkError``.
    public func delete(
        _ path: String, query: Query = Query(), headers: HTTPHeaders = HTTPHeaders(),
        policy: EndpointPolicy = .standard
    ) async throws {
        try await send(Request<Void>.delete(path, query: query, headers: headers, policy: policy))
    }
}
