import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ordered array of interceptors folded over a transport. Index 0 is outermost: it sees the
/// request first and the response last.
///
/// A sensible order, and why:
/// ```swift
/// [RequestIDInterceptor(),   // one ID for the whole call
///  LoggingInterceptor(...),  // outside retries: one log line per call
///  MetricsInterceptor(...),  // one event per call, with the retry count
///  CacheInterceptor(...),    // a hit skips retries; stale-if-error applies after retries are spent
///  RetryInterceptor(),       // each attempt goes through auth again…
///  AuthInterceptor(...),     // …so it carries the current token
///  IdempotencyInterceptor()] // the key comes from the context: the same on every attempt
/// ```
/// The pipeline marks each time the transport is reached with ``RequestContext/beginAttempt()``.
public struct Pipeline: Sendable {
    /// The interceptors, outermost first.
    public let interceptors: [any Interceptor]
    /// Where the innermost interceptor's `next` goes.
    public let transport: any Transport

    /// Creates a pipeline.
    public init(interceptors: [any Interceptor], transport: any Transport) {
        self.interceptors = interceptors
        self.transport = transport
    }

    /// Runs `request` through every interceptor and the transport.
    ///
    /// - Throws: Whatever an interceptor or the transport throws.
    public func send(_ request: URLRequest, context: RequestContext) async throws -> HTTPResponse {
        try await run(from: 0, request, context)
    }

    private func run(from index: Int, _ request: URLRequest, _ context: RequestContext) async throws -> HTTPResponse {
        do {
            guard index < interceptors.count else {
                try Task.checkCancellation()
                context.beginAttempt()
                return try await transport.send(request)
            }
            let next = Next { [self] request in try await self.run(from: index + 1, request, context) }
            return try await interceptors[index].intercept(request, context: context, next: next)
        } catch where context.isDeadlineExpired && NetworkError(error).isCancellation {
            // The client cancelled the call because its deadline passed: every layer above sees
            // a timeout (logged and counted as one), not a cancellation.
            throw NetworkError.timedOut(nil)
        }
    }
}
