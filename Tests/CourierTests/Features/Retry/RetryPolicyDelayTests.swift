import Foundation
import Testing
import Courier
import CourierTesting

extension RetryTests {
    /// The delay arithmetic of `RetryPolicy`: exponential backoff, jitter, `Retry-After`.
    @Suite struct RetryPolicyDelayTests {
        static let now = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15T08:00:00Z

        @Test(arguments: [
            (0, Duration.milliseconds(500)), (1, .seconds(1)), (2, .seconds(2)), (3, .seconds(4)),
            (4, .seconds(8)), (5, .seconds(8)), (200, .seconds(8)), (Int.max, .seconds(8)), (-3, .milliseconds(500)),
        ])
        func exponentialBackoffIsCapped(retry: Int, expected: Duration) {
            let policy = RetryPolicy(baseDelay: .milliseconds(500), maxDelay: .seconds(8), jitter: .none)
            #expect(policy.backoff(forRetry: retry) == expected)
            #expect(policy.jitteredBackoff(forRetry: retry, random: 0.3) == expected)
        }

        @Test(arguments: [
            (RetryPolicy.Jitter.none, 0.25, Duration.seconds(2)),
            (.full, 0.0, .zero), (.full, 0.25, .milliseconds(500)), (.full, 1.0, .seconds(2)),
            (.equal, 0.0, .seconds(1)), (.equal, 0.5, .milliseconds(1500)), (.equal, 1.0, .seconds(2)),
            (.full, 7.0, .seconds(2)), (.full, -1.0, .zero), (.full, .nan, .zero),
        ])
        func jitterUsesTheInjectedRandomNumber(jitter: RetryPolicy.Jitter, random: Double, expected: Duration) {
            // Third retry: 0.5 s × 2² = 2 s before jitter.
            let policy = RetryPolicy(baseDelay: .milliseconds(500), maxDelay: .seconds(8), jitter: jitter)
            #expect(policy.jitteredBackoff(forRetry: 2, random: random) == expected)
        }

        @Test func baseAboveTheCapIsCapped() {
            let policy = RetryPolicy(baseDelay: .seconds(10), maxDelay: .seconds(3), jitter: .none)
            #expect(policy.backoff(forRetry: 0) == .seconds(3))
        }

        @Test func retryAfterSecondsWins() {
            let policy = RetryPolicy(jitter: .none)
            #expect(
                policy.delay(forRetry: 1, retryAfter: RetryAfter(headerValue: "7"), now: Self.now, random: 0.5) == .seconds(7))
        }

        /// The three HTTP-date forms of RFC 9110 §5.6.7, each 90 s after `now`.
        @Test(arguments: [
            "Fri, 15 Jan 2027 08:01:30 GMT",  // IMF-fixdate
            "Friday, 15-Jan-27 08:01:30 GMT",  // RFC 850
            "Fri Jan 15 08:01:30 2027",  // asctime
        ])
        func retryAfterDateFormats(_ header: String) throws {
            let retryAfter = try #require(RetryAfter(headerValue: header))
            let policy = RetryPolicy(jitter: .none, maxRetryAfter: .seconds(600))
            #expect(policy.retryAfterDelay(retryAfter, now: Self.now) == .seconds(90))
            #expect(policy.delay(forRetry: 0, retryAfter: retryAfter, now: Self.now, random: 0.5) == .seconds(90))
        }

        /// A past date, "now", zero seconds or garbage give no usable hint: the backoff applies,
        /// never a zero-delay retry loop.
        @Test(arguments: ["Fri, 15 Jan 2027 07:59:00 GMT", "Fri, 15 Jan 2027 08:00:00 GMT", "0", "soon", "", "-5", "1.5"])
        func unusableRetryAfterFallsBackToBackoff(_ header: String) {
            let policy = RetryPolicy(baseDelay: .milliseconds(500), maxDelay: .seconds(8), jitter: .none)
            let retryAfter = RetryAfter(headerValue: header)
            #expect(policy.retryAfterDelay(retryAfter, now: Self.now) == nil)
            #expect(policy.delay(forRetry: 1, retryAfter: retryAfter, now: Self.now, random: 0.5) == .seconds(1))
        }

        /// `Retry-After` is the server's instruction: the wait is reported as asked, never cut to
        /// `maxRetryAfter` (the interceptor stops retrying instead of retrying early).
        @Test func retryAfterIsNeverShortened() {
            let policy = RetryPolicy(maxRetryAfter: .seconds(30))
            #expect(policy.retryAfterDelay(RetryAfter(headerValue: "3600"), now: Self.now) == .seconds(3600))
            let date = RetryAfter(headerValue: "Fri, 15 Jan 2027 09:00:00 GMT")
            #expect(policy.retryAfterDelay(date, now: Self.now) == .seconds(3600))
        }
    }

    /// Which requests and failures `RetryPolicy` considers retryable.
    @Suite struct RetryPolicyRuleTests {
        @Test(arguments: ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"])
        func idempotentMethodsMayBeRetried(_ method: String) {
            #expect(RetryPolicy.default.allowsRetry(method: HTTPMethod(rawValue: method), hasIdempotencyKey: false))
        }

        @Test(arguments: ["POST", "PATCH"])
        func nonIdempotentMethodsNeedAKey(_ method: String) {
            let method = HTTPMethod(rawValue: method)
            #expect(!RetryPolicy.default.allowsRetry(method: method, hasIdempotencyKey: false))
            #expect(RetryPolicy.default.allowsRetry(method: method, hasIdempotencyKey: true))
            let strict = RetryPolicy(retriesKeyedNonIdempotentRequests: false)
            #expect(!strict.allowsRetry(method: method, hasIdempotencyKey: true))
        }

        @Test(arguments: [408, 429, 500, 502, 503, 504])
        func defaultRetryableStatuses(_ status: Int) {
            #expect(RetryPolicy.default.isRetryable(statusCode: status))
        }

        @Test(arguments: [200, 201, 304, 400, 401, 403, 404, 409, 410, 412, 422, 501, 505])
        func otherStatusesAreFinal(_ status: Int) {
            #expect(!RetryPolicy.default.isRetryable(statusCode: status))
        }

        @Test(arguments: [
            URLError.Code.timedOut, .networkConnectionLost, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed,
        ])
        func transientTransportFailuresAreRetryable(_ code: URLError.Code) {
            #expect(RetryPolicy.default.isRetryable(URLError(code)))
            #expect(RetryPolicy.default.isRetryable(NetworkError(URLError(code))))
        }

        @Test(arguments: [
            URLError.Code.cancelled, .badURL, .secureConnectionFailed, .notConnectedToInternet, .cannotDecodeContentData,
            .unknown,
        ])
        func otherTransportFailuresAreFinal(_ code: URLError.Code) {
            #expect(!RetryPolicy.default.isRetryable(URLError(code)))
        }

        /// A connection closed before any response byte reaches the policy as
        /// `networkConnectionLost` on every transport (URLSession on Linux reports libcurl's
        /// "Empty reply from server" as `badServerResponse`, which the transport maps); a
        /// `badServerResponse` left is a reply that is not HTTP, retried on no platform.
        @Test func aReplyThatIsNotHTTPIsNotRetriedOnAnyPlatform() {
            #expect(!RetryPolicy.default.isRetryable(URLError(.badServerResponse)))
            #expect(RetryPolicy.default.isRetryable(URLError(.networkConnectionLost)))
            let emptyReply = URLError(
                .badServerResponse, userInfo: [NSLocalizedDescriptionKey: "Empty reply from server"])
            #expect(URLSessionTransport.mappedFailure(emptyReply).code == .networkConnectionLost)
        }

        @Test func cancellationAndDeadlineAreNeverRetried() {
            #expect(!RetryPolicy.default.isRetryable(CancellationError()))
            #expect(!RetryPolicy.default.isRetryable(NetworkError.cancelled))
            #expect(!RetryPolicy.default.isRetryable(NetworkError.timedOut(nil)))
            #expect(!RetryPolicy.default.isRetryable(NetworkError.sessionExpired))
        }

        @Test func thrownStatusErrorsFollowTheStatusRules() {
            let unavailable = NetworkError(response: .status(503))
            let notFound = NetworkError(response: .status(404))
            #expect(RetryPolicy.default.isRetryable(unavailable))
            #expect(!RetryPolicy.default.isRetryable(notFound))
            #expect(!RetryPolicy.refresh.isRetryable(NetworkError(response: .status(500))))
        }

        @Test func presetsMatchTheirDocumentation() {
            #expect(RetryPolicy.none.maxRetries == 0)
            #expect(RetryPolicy.default.maxRetries == 2)
            #expect(RetryPolicy.polling.maxRetryAfter == .seconds(300))
            #expect(RetryPolicy.upload.jitter == .equal)
            #expect(RetryPolicy.refresh.retryableStatusCodes == [502, 503, 504])
            #expect(RetryPolicy(maxRetries: -4).maxRetries == 0)
        }
    }
}
