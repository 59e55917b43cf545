import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends the call's ``RequestContext/requestID`` as `X-Request-ID` so client logs and server logs can be
/// joined. Every attempt of one call carries the same ID. A value set by the endpoint is kept.
public struct RequestIDInterceptor: Interceptor {
    /// The header name; `X-Request-ID` by default.
    public let headerName: String

    /// Creates the interceptor.
    public init(headerName: String = "X-Request-ID") { self.headerName = headerName }

    public func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        var request = request
        if request.value(forHTTPHeaderField: headerName) == nil {
            request.setValue(context.requestID.description, forHTTPHeaderField: headerName)
        }
        return try await next(request)
    }
}
