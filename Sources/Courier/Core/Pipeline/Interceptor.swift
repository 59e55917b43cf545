import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One step of the request pipeline: it may change the request, call ``Next`` zero, one or several
/// times, and change or replace the response.
///
/// Every built-in feature (request IDs, auth, retries, caching, logging) is an interceptor, so the
/// pipeline array reads top to bottom as what happens to a request. Interceptors see every HTTP
/// status as a response value; errors thrown are transport failures (`URLError`), cancellation, or
/// a ``NetworkError`` an interceptor decided on.
///
/// ```swift
/// struct UserAgentInterceptor: Interceptor {
///     func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
///         var request = request
///         request.setValue("MyApp/1.0", forHTTPHeaderField: "User-Agent")
///         return try await next(request)
///     }
/// }
/// ```
public protocol Interceptor: Sendable {
    /// Handles `request` for the call described by `context`.
    ///
    /// - Parameters:
    ///   - request: The request as the outer interceptors left it.
    ///   - context: The call's shared state (one per logical call, not per attempt).
    ///   - next: The rest of the pipeline, ending at the transport.
    /// - Returns: The response to hand back to the outer interceptors.
    /// - Throws: Whatever `next` throws, or an error of the interceptor's own.
    func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse

    /// The policy promises this interceptor keeps (see ``PipelineCapabilities``); none by default.
    var capabilities: PipelineCapabilities { get }
}

/// The rest of the pipeline after the current interceptor. Call it like a function:
/// `try await next(request)`. It may be called more than once (retries).
public struct Next: Sendable {
    private enum Step: Sendable {
        case closure(@Sendable (URLRequest) async throws -> HTTPResponse)
        /// The pipeline from `index` on: no closure allocated per interceptor and call.
        case pipeline(Pipeline, index: Int, context: RequestContext)
    }

    private let step: Step

    /// Wraps a closure as the rest of the pipeline (useful in tests of a single interceptor).
    public init(_ proceed: @escaping @Sendable (URLRequest) async throws -> HTTPResponse) {
        self.step = .closure(proceed)
    }

    /// The rest of `pipeline` from the interceptor at `index` on.
    init(_ pipeline: Pipeline, from index: Int, context: RequestContext) {
        self.step = .pipeline(pipeline, index: index, context: context)
    }

    /// Sends `request` through the remaining interceptors and the transport.
    public func callAsFunction(_ request: URLRequest) async throws -> HTTPResponse {
        switch step {
        case .closure(let proceed): return try await proceed(request)
        case .pipeline(let pipeline, let index, let context): return try await pipeline.run(from: index, request, context)
        }
    }
}
