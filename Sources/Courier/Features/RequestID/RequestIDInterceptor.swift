import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends the call's ``RequestContext/requestID`` as `X-Request-ID` so client logs and server logs can be
/// joined. Every attempt of one call carries the same ID. A value set by the endpoint is kept.
///
/// First in the pipeline (its place in the standard one), its field is written by the client
/// together with the endpoint's own fields when the request is built — the same request, one
/// header write fewer per call — unless a request modifier (``Request/modifyRequest(_:)``) runs.
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
