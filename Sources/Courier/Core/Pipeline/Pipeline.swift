import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An ordered array of interceptors folded over a transport. Index 0 is outermost: it sees the
/// request first and the response last. The recommended order, and the reason for each position,
/// is documented once, on ``Swift/Array/standard(tokenManager:cache:logger:redactor:recorders:metrics:retry:)``.
///
/// Its last step, between the innermost interceptor and the transport, attaches the call's body
/// stream and follows redirects (`RedirectFollower`, RFC 9110 §15.4).
///
/// The pipeline marks each time the transport is reached as a new attempt of the call
/// (``RequestContext/attempt``) and runs the client's ``ResponseValidator``s on each response the
/// caller accepts, so a validator's error is seen by the retry interceptor (see ``RetryableError``)
/// and a rejected response is never stored by the cache.
///
/// A class: every ``Next`` the pipeline hands an interceptor holds one reference to it, not a copy
/// of its fields (a retain and a release each, per interceptor and call).
package final class Pipeline: Sendable {
    /// The interceptors, outermost first.
    package let interceptors: [any Interceptor]
    /// Where the innermost interceptor's `next` goes.
    package let transport: any Transport
    /// Checks run on every response whose status the caller accepts (never in raw-status mode).
    let validators: [any ResponseValidator]
    /// What the redirect step keeps on a cross-origin hop.
    let redirectRules: RedirectRules
    /// The most body bytes a buffered response may hold (``APIClient/Configuration/maximumResponseBodySize``).
    let maximumBodySize: Int?

    /// Creates a pipeline.
    package convenience init(interceptors: [any Interceptor], transport: any Transport) {
        self.init(interceptors: interceptors, transport: transport, validators: [])
    }

    init(
        interceptors: [any Interceptor], transport: any Transport, validators: [any ResponseValidator],
        redirectRules: RedirectRules = .default, maximumBodySize: Int? = nil
    ) {
        self.interceptors = interceptors
        self.transport = transport
        self.validators = validators
        self.redirectRules = redirectRules
        self.maximumBodySize = maximumBodySize
    }

    /// Runs `request` through every interceptor and the transport.
    ///
    /// - Throws: Whatever an interceptor, a validator or the transport throws.
    package func send(_ request: URLRequest, context: RequestContext) async throws -> HTTPResponse {
        try await run(from: 0, request, context)
    }

    /// Runs `request` through the interceptors from `index` on, then the transport.
    func run(from index: Int, _ request: URLRequest, _ context: RequestContext) async throws -> HTTPResponse {
        do {
            guard index < interceptors.count else {
                try Task.checkCancellation()
                let attempt = context.beginAttempt()
                context.taskTimings = nil  // this attempt's, or none: never an earlier attempt's
                context.recordSent(request)
                context.emit(.attemptStarted(attempt: attempt))
                let follower = RedirectFollower(transport: transport, rules: redirectRules, maximumBodySize: maximumBodySize)
                let response = try await follower.send(request, context: context)
                context.fireStartHook()  // a response proves the request left, also from a transport that never reports
                context.emit(.responseHead(statusCode: response.statusCode, attempt: attempt))
                if context.eventMonitors != nil, let timings = context.taskTimings { context.emit(.taskTimings(timings)) }
                try validate(response, context: context)
                return response
            }
            return try await interceptors[index].intercept(
                request, context: context, next: Next(self, from: index + 1, context: context))
        } catch {
            // The client cancelled the call because its deadline passed: every layer above sees
            // a timeout (logged and counted as one), not a cancellation.
            throw context.mappingDeadline(error)
        }
    }

    private func validate(_ response: HTTPResponse, context: RequestContext) throws {
        guard !validators.isEmpty, context.streaming == nil, response.body.isBuffered, context.statusValidation != .none,
            context.accepts(statusCode: response.statusCode)
        else { return }
        for validator in validators {
            do {
                try validator.validate(response, context: context)
            } catch let error as NetworkError {
                throw error
            } catch {
                throw ValidationFailure(underlying: error, response: response)
            }
        }
    }
}

/// A validator's own (non-``NetworkError``) error on its way out of the pipeline; the client
/// reports it as ``NetworkError/decoding(_:)``. Retryable when the underlying error says so.
struct ValidationFailure: RetryableError, Sendable {
    let underlying: any Error
    let response: HTTPResponse
    var isRetryable: Bool { (underlying as? any RetryableError)?.isRetryable ?? false }
}
