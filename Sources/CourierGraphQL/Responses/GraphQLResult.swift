import Courier
import Foundation

/// What ``GraphQLClient/response(for:)`` returns: the decoded `data` together with any errors
/// that came with it (a partial result: the fields with errors are `null`), the response's
/// `extensions`, and the HTTP response and call context.
public struct GraphQLResult<ResponseData: Sendable>: Sendable {
    /// The decoded `data` member.
    public let data: ResponseData
    /// Field errors that came with ``data``; empty for a complete result.
    public let errors: [GraphQLError]
    /// The response's `extensions` member (tracing, cost); empty when none.
    public let extensions: [String: GraphQLValue]
    /// The HTTP response the data came from.
    public let response: HTTPResponse
    /// The call's context: request ID, attempts, cache outcome, de-duplication role.
    public let context: RequestContext

    /// Whether some fields are missing because of ``errors``.
    public var isPartial: Bool { !errors.isEmpty }

    /// Creates a result.
    public init(
        data: ResponseData, errors: [GraphQLError], extensions: [String: GraphQLValue],
        response: HTTPResponse, context: RequestContext
    ) {
        self.data = data
        self.errors = errors
        self.extensions = extensions
        self.response = response
        self.context = context
    }
}
