import Courier
import Foundation

/// A GraphQL response that carries errors where the caller needed data — thrown by
/// ``GraphQLClient``:
/// - by ``GraphQLClient/response(for:)`` when the response has no usable `data` (a request error
///   such as a validation failure or an unknown persisted query, or a field error that nulled the
///   whole result);
/// - by ``GraphQLClient/send(_:)`` also when `data` came with errors (partial data): use
///   ``GraphQLClient/response(for:)`` to take partial data instead.
///
/// It carries every error with its message, path and extension code. A 4xx or 5xx answered with
/// `application/graphql-response+json` and a GraphQL body is reported as this error (with
/// ``statusCode``), not as a bare HTTP `NetworkError` (GraphQL-over-HTTP draft, "Status Codes").
public struct GraphQLFailure: Error, Sendable, Hashable, CustomStringConvertible, LocalizedError, DescribedError {
    /// The operation that failed.
    public var operationName: String
    /// Every error of the response, in order; never empty.
    public var errors: [GraphQLError]
    /// The response's status code: 200 for a legacy `application/json` server, 4xx for a request
    /// error answered as `application/graphql-response+json`.
    public var statusCode: Int
    /// `true` when the response also carried (partial) `data`, which ``GraphQLClient/send(_:)``
    /// did not return.
    public var hasPartialData: Bool
    /// The response's `extensions` member; empty when none.
    public var extensions: [String: GraphQLValue]

    /// Creates a failure.
    public init(
        operationName: String, errors: [GraphQLError], statusCode: Int, hasPartialData: Bool,
        extensions: [String: GraphQLValue] = [:]
    ) {
        self.operationName = operationName
        self.errors = errors
        self.statusCode = statusCode
        self.hasPartialData = hasPartialData
        self.extensions = extensions
    }

    /// The extension codes of the errors, in order, without repeats.
    public var codes: [String] {
        var seen = Set<String>()
        return errors.compactMap(\.code).filter { seen.insert($0).inserted }
    }

    /// Whether any error has the extension code `code`.
    public func contains(code: String) -> Bool { errors.contains { $0.code == code } }

    /// `GetItem failed (HTTP 200): Item 99 not found (at item, code NOT_FOUND)`, one error after another.
    public var description: String {
        "\(operationName) failed (HTTP \(statusCode)): " + errors.map(\.description).joined(separator: "; ")
    }
}
