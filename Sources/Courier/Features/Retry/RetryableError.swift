/// An error that says whether a new attempt can fix it — for a ``ResponseValidator`` whose check
/// can fail transiently (a 200 whose body says "try again", an eventually consistent read).
///
/// Throw it from a validator and ``RetryInterceptor`` retries the call under the endpoint's
/// ``RetryPolicy`` (count, backoff, deadline, idempotency rules) like a retryable status.
/// ```swift
/// struct NotReadyYet: RetryableError { var isRetryable: Bool { true } }
/// ```
public protocol RetryableError: Error {
    /// `true` when another attempt may succeed.
    var isRetryable: Bool { get }
}
