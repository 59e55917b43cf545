/// An app's own retry decision, without writing an interceptor: called by ``RetryInterceptor``
/// for every failed attempt of a call that may be repeated, with what the endpoint's
/// ``RetryPolicy`` would do, and free to wait for something asynchronous first — the user
/// accepting new terms, a captive portal being dismissed, a feature flag loading.
///
/// ```swift
/// let retry = RetryInterceptor(decider: RetryDecider { failure, context in
///     guard failure.response?.statusCode == 451 else { return failure.proposal }
///     return await termsFlow.userAccepted() ? .retry(after: .zero) : .doNotRetry
/// })
/// ```
///
/// Limits the decider cannot lift: only requests safe to repeat are offered (idempotent methods or
/// a request with an `Idempotency-Key`, RFC 9110 §9.2.2); at most ``RetryPolicy/maxRetries``
/// retries; never past the call's deadline; never earlier than the server's `Retry-After`.
public struct RetryDecider: Sendable {
    private let decide: @Sendable (RetryFailure, RequestContext) async -> RetryDecision

    /// Wraps a decision function.
    public init(_ decide: @escaping @Sendable (RetryFailure, RequestContext) async -> RetryDecision) {
        self.decide = decide
    }

    /// The decision for `failure`.
    package func decision(for failure: RetryFailure, context: RequestContext) async -> RetryDecision {
        await decide(failure, context)
    }
}

/// A failed attempt offered to a ``RetryDecider``.
public struct RetryFailure: Sendable {
    /// The response, when the attempt got one whose status the caller does not accept.
    public let response: HTTPResponse?
    /// The error, when the attempt threw.
    public let error: (any Error)?
    /// Index of the retry that would follow: 0 for the first retry.
    public let retry: Int
    /// What the endpoint's ``RetryPolicy`` decided on its own.
    public let proposal: RetryDecision
}

/// Whether and when a failed attempt is repeated.
public enum RetryDecision: Sendable, Hashable {
    /// Send the next attempt after this wait (raised to the server's `Retry-After` when shorter).
    case retry(after: Duration)
    /// Return the failure to the caller.
    case doNotRetry
}
