/// What an interceptor does for the policies endpoints declare. The client checks every call's
/// ``EndpointPolicy`` against the capabilities of its pipeline and fails the call locally, before
/// anything is sent, when a promise of the policy would otherwise be silently dropped — see
/// ``NetworkError/missingInterceptor(_:)``.
///
/// Built-in interceptors declare theirs; a custom interceptor that takes over one of these jobs
/// (say, its own bearer-token interceptor) declares it the same way:
/// ```swift
/// struct MyAuthInterceptor: Interceptor {
///     var capabilities: PipelineCapabilities { .authentication }
///
///     func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
///         var request = request
///         request.setValue("Bearer \(await session.token())", forHTTPHeaderField: "Authorization")
///         return try await next(request)
///     }
/// }
/// ```
public struct PipelineCapabilities: OptionSet, Sendable, Hashable {
    /// The raw bits.
    public let rawValue: Int
    /// Creates a set from raw bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Adds the user's credentials for ``AuthRequirement/required`` (``AuthInterceptor``).
    public static let authentication = PipelineCapabilities(rawValue: 1 << 0)
    /// Sends the call's `Idempotency-Key` for ``IdempotencyPolicy`` (``IdempotencyInterceptor``).
    public static let idempotencyKeys = PipelineCapabilities(rawValue: 1 << 1)
    /// Answers from an HTTP cache, needed by ``CachePolicy/onlyIfCached`` (``CacheInterceptor``).
    public static let caching = PipelineCapabilities(rawValue: 1 << 2)
    /// Retries failed attempts as ``EndpointPolicy/retry`` allows (``RetryInterceptor``). A client
    /// whose pipeline has no interceptor with it adds a default ``RetryInterceptor``, so
    /// ``EndpointPolicy/retry`` is never dropped.
    public static let retries = PipelineCapabilities(rawValue: 1 << 3)
}

extension Interceptor {
    /// No capabilities: the default for interceptors that do not carry out a policy.
    public var capabilities: PipelineCapabilities { [] }
}

extension EndpointPolicy {
    /// The first capability this policy needs that `available` lacks, described for the error.
    func missingCapability(in available: PipelineCapabilities) -> String? {
        if auth == .required, !available.contains(.authentication) {
            return "the endpoint requires auth but the pipeline has no AuthInterceptor (add one with `.standard(tokenManager:)`)"
        }
        if idempotency != .none, !available.contains(.idempotencyKeys) {
            return "the endpoint declares an Idempotency-Key but the pipeline has no IdempotencyInterceptor"
        }
        if cache == .onlyIfCached, !available.contains(.caching) {
            return
                "the endpoint reads only from the cache (onlyIfCached) but the pipeline has no CacheInterceptor (add one with `.standard(cache:)`)"
        }
        return nil
    }
}
