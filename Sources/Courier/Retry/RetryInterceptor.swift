import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Repeats failed attempts as the endpoint's ``RetryPolicy`` allows, waiting between them.
///
/// Rules, in the order they are checked:
/// - **Only safe-to-repeat requests.** Idempotent methods, or a request that carries an
///   idempotency key (``RequestContext/idempotencyKey`` or an `Idempotency-Key` header) when
///   ``RetryPolicy/retriesKeyedNonIdempotentRequests`` is on. A plain POST or PATCH is sent once
///   (RFC 9110 §9.2.2): if the connection drops after the server stored it, the caller gets the
///   transport error rather than a duplicate.
/// - **Only failures a new attempt can fix**: ``RetryPolicy/retryableStatusCodes`` (default 408,
///   429, 500, 502, 503, 504) and ``RetryPolicy/retryableErrorCodes``; never another 4xx, never a
///   cancellation. At most ``RetryPolicy/maxRetries`` retries.
/// - **Delay**: the server's `Retry-After` (both forms, at most ``RetryPolicy/maxRetryAfter``),
///   else exponential backoff with jitter — see ``RetryPolicy/delay(forRetry:retryAfter:now:random:)``.
/// - **Deadline**: a wait that would end after the call's deadline
///   (``RequestContext/startedAt`` + ``EndpointPolicy/deadline``) is not started; the last
///   response is returned (or the last error thrown) at once instead of timing out later.
/// - **Cancellation** is checked before every attempt, and the wait itself ends the moment the
///   task is cancelled (`CancellationError`, which the client reports as ``NetworkError/cancelled``);
///   nothing more is sent.
///
/// Each retry is recorded in the context (``RequestContext/retryRecords``) when its wait starts.
///
/// Position: after the cache and before ``AuthInterceptor``, so every attempt goes through auth
/// again and carries the current token, and before ``IdempotencyInterceptor``, whose key comes
/// from the context and so is the same on every attempt. Keep this the only retry layer — see
/// ``RetryPolicy`` for why layered retries multiply.
///
/// ```swift
/// RetryInterceptor()                                      // production
/// RetryInterceptor(clock: testClock, random: { 0.5 })     // exact delays in tests
/// ```
public struct RetryInterceptor: Interceptor {
    /// Returns a uniform random number in `0...1` for the jitter.
    public typealias RandomSource = @Sendable () -> Double

    private let clock: ElapsedClock
    private let random: RandomSource
    private let now: @Sendable () -> Date

    /// Creates the interceptor.
    ///
    /// - Parameters:
    ///   - clock: Measures the deadline and performs the waits; `ContinuousClock` by default.
    ///     Inject a test clock to check delays exactly without sleeping.
    ///   - random: The jitter's random source, returning values in `0...1`.
    ///   - now: The wall-clock time used to resolve an HTTP-date `Retry-After`.
    public init(
        clock: some Clock<Duration> = ContinuousClock(),
        random: @escaping RandomSource = { Double.random(in: 0...1) },
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.clock = ElapsedClock(clock)
        self.random = random
        self.now = now
    }

    public func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        let policy = context.policy.retry
        let method = request.httpMethod.map { HTTPMethod(rawValue: $0) } ?? context.method
        let keyed = context.idempotencyKey != nil || request.value(forHTTPHeaderField: "Idempotency-Key") != nil
        let repeatable = policy.maxRetries > 0 && policy.allowsRetry(method: method, hasIdempotencyKey: keyed)
        // The remaining budget of the call, on this interceptor's clock.
        let deadline = clock.elapsed() + (context.policy.deadline - context.elapsed)

        var retry = 0
        while true {
            try Task.checkCancellation()
            let outcome: Result<HTTPResponse, any Error>
            do {
                outcome = .success(try await next(request))
            } catch {
                outcome = .failure(error)
            }
            guard repeatable, retry < policy.maxRetries, let failure = retryableFailure(outcome, policy: policy) else {
                return try outcome.get()
            }
            // A cancelled call is never retried, whatever the last attempt returned.
            try Task.checkCancellation()
            let hinted = policy.retryAfterDelay(failure.retryAfter, now: now())
            let delay = hinted ?? policy.jitteredBackoff(forRetry: retry, random: random())
            guard clock.elapsed() + delay <= deadline else {
                return try outcome.get()
            }
            context.update(RetryRecordsKey.self, default: []) {
                $0.append(RetryRecord(retry: retry, reason: failure.reason, delay: delay,
                                      delaySource: hinted == nil ? .backoff : .retryAfter))
            }
            try await clock.sleep(delay)
            retry += 1
        }
    }

    private struct RetryableFailure {
        var reason: RetryRecord.Reason
        var retryAfter: RetryAfter?
    }

    /// The reason to retry `outcome`, or `nil` when it is a success or a final failure.
    private func retryableFailure(_ outcome: Result<HTTPResponse, any Error>, policy: RetryPolicy) -> RetryableFailure? {
        switch outcome {
        case .success(let response):
            guard policy.isRetryable(statusCode: response.statusCode) else { return nil }
            return RetryableFailure(reason: .status(response.statusCode), retryAfter: RetryAfter(response: response))
        case .failure(let error):
            guard policy.isRetryable(error) else { return nil }
            if let failed = (error as? NetworkError)?.failedResponse {
                return RetryableFailure(
                    reason: .status(failed.statusCode),
                    retryAfter: failed.headers["Retry-After"].flatMap(RetryAfter.init(headerValue:)))
            }
            return RetryableFailure(reason: .transport(Self.urlErrorCode(of: error)), retryAfter: nil)
        }
    }

    private static func urlErrorCode(of error: any Error) -> URLError.Code {
        switch error {
        case let error as URLError:
            return error.code
        case NetworkError.offline(let underlying), NetworkError.transport(let underlying),
             NetworkError.timedOut(let underlying?):
            return underlying.code
        default:
            return .unknown
        }
    }
}

/// Any `Clock<Duration>` reduced to what the retry loop needs: time elapsed since the interceptor
/// was created, and a cancellable sleep.
private struct ElapsedClock: Sendable {
    let elapsed: @Sendable () -> Duration
    let sleep: @Sendable (Duration) async throws -> Void

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        sleep = { try await clock.sleep(for: $0) }
    }
}
