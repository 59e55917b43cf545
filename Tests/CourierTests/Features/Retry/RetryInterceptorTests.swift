import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension RetryTests {
    /// `RetryInterceptor` on a `StubTransport`, with an injected clock and random source.
    @Suite struct RetryInterceptorTests {
        @Test func retriesUntilSuccessWithExactBackoff() async throws {
            let stub = StubTransport(responses: [RetryFixture.status(503), RetryFixture.status(502), .json(#"{"ok":true}"#)])
            let clock = TestClock()
            let client = RetryFixture.client(stub, clock: clock, random: 0.5)
            let response = try await client.response(for: RetryFixture.get())
            #expect(response.statusCode == 200)
            #expect(stub.requestCount == 3)
            // Default policy: 0.5 s base, full jitter with random 0.5 → 0.25 s, then 0.5 s.
            #expect(clock.sleeps == [.milliseconds(250), .milliseconds(500)])
            #expect(response.context.retryDelays == [.milliseconds(250), .milliseconds(500)])
            #expect(response.context.retryRecords.map(\.reason) == [.status(503), .status(502)])
            #expect(response.context.retryRecords.map(\.delaySource) == [.backoff, .backoff])
            #expect(response.context.attempt == 3)
        }

        @Test func retryAfterSecondsIsTheDelay() async throws {
            let stub = StubTransport(responses: [
                RetryFixture.status(503, retryAfter: "1"), RetryFixture.status(429, retryAfter: "3"), .status(204),
            ])
            let clock = TestClock()
            let response = try await RetryFixture.client(stub, clock: clock).response(for: RetryFixture.get())
            #expect(response.statusCode == 204)
            #expect(clock.sleeps == [.seconds(1), .seconds(3)])
            #expect(response.context.retryRecords.map(\.delaySource) == [.retryAfter, .retryAfter])
        }

        @Test func retryAfterDateIsMeasuredFromTheInjectedNow() async throws {
            // now = 1_800_000_000 = Fri, 15 Jan 2027 08:00:00 GMT; the date is 12 s later.
            let stub = StubTransport(responses: [
                RetryFixture.status(503, retryAfter: "Fri, 15 Jan 2027 08:00:12 GMT"), .status(200),
            ])
            let clock = TestClock()
            _ = try await RetryFixture.client(stub, clock: clock).response(for: RetryFixture.get())
            #expect(clock.sleeps == [.seconds(12)])
        }

        @Test func pastRetryAfterDateUsesBackoffNotZero() async throws {
            let stub = StubTransport(responses: [
                RetryFixture.status(503, retryAfter: "Fri, 15 Jan 2027 07:00:00 GMT"), .status(200),
            ])
            let clock = TestClock()
            let response = try await RetryFixture.client(stub, clock: clock, random: 1).response(for: RetryFixture.get())
            #expect(clock.sleeps == [.milliseconds(500)])
            #expect(response.context.retryRecords.first?.delaySource == .backoff)
        }

        @Test func exhaustedRetriesReturnTheLastResponse() async throws {
            let stub = StubTransport(responses: Array(repeating: RetryFixture.status(503), count: 5))
            let clock = TestClock()
            let error = await RetryFixture.networkError {
                try await RetryFixture.client(stub, clock: clock).send(RetryFixture.get())
            }
            #expect(error?.statusCode == 503)
            #expect(stub.requestCount == 3)  // maxRetries 2 → three attempts
            #expect(clock.sleeps.count == 2)
        }

        @Test func maxRetriesZeroRunsOnce() async throws {
            let stub = StubTransport(responses: [RetryFixture.status(503), .status(200)])
            let policy = EndpointPolicy.standard.with(\.retry, .none)
            let error = await RetryFixture.networkError {
                try await RetryFixture.client(stub).send(RetryFixture.get(policy: policy))
            }
            #expect(error?.statusCode == 503)
            #expect(stub.requestCount == 1)
        }

        @Test(arguments: [400, 401, 403, 404, 409, 410, 422])
        func clientErrorsAreNeverRetried(_ status: Int) async throws {
            let stub = StubTransport(responses: [RetryFixture.status(status), .status(200)])
            let clock = TestClock()
            let error = await RetryFixture.networkError {
                try await RetryFixture.client(stub, clock: clock).send(RetryFixture.get())
            }
            #expect(error?.statusCode == status)
            #expect(stub.requestCount == 1)
            #expect(clock.sleeps.isEmpty)
        }

        @Test(arguments: ["POST", "PATCH"])
        func nonIdempotentRequestsWithoutKeyAreNeverRetried(_ method: String) async throws {
            let stub = StubTransport(responses: [.failure(URLError(.networkConnectionLost)), .success(.status(201))])
            let clock = TestClock()
            let request = RetryFixture.request(HTTPMethod(rawValue: method), policy: .standard)
            let error = await RetryFixture.networkError { try await RetryFixture.client(stub, clock: clock).send(request) }
            guard case .transport(let urlError)? = error else {
                Issue.record("expected a transport error, got \(String(describing: error))")
                return
            }
            #expect(urlError.code == .networkConnectionLost)
            #expect(stub.requestCount == 1)
            #expect(clock.sleeps.isEmpty)
        }

        /// A failure before any connection (refused, unknown host) proves the request never left:
        /// even a POST without a key goes out again, once it can reach the server.
        @Test(arguments: [URLError.Code.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed])
        func aPostThatNeverLeftTheDeviceIsRetried(_ code: URLError.Code) async throws {
            let stub = StubTransport(responses: [.failure(URLError(code)), .success(.status(201))])
            let request = RetryFixture.request(.post, policy: .standard)
            let response = try await RetryFixture.client(stub).response(for: request)
            #expect(response.statusCode == 201)
            #expect(stub.requestCount == 2)
            #expect(stub.requests.allSatisfy { $0.value(forHTTPHeaderField: "Idempotency-Key") == nil })
            #expect(response.context.retryRecords.map(\.reason) == [.transport(code)])
        }

        /// A POST answered `303 See Other` was handled; a target that cannot be reached must not
        /// send the POST again (the retry repeats the whole call from its first hop).
        @Test func aPostWhoseRedirectTargetCannotBeReachedIsNotSentAgain() async throws {
            let stub = StubTransport(responses: [
                .success(.status(303, headers: ["Location": "/v1/result"])),
                .failure(URLError(.cannotConnectToHost)), .success(.status(201)),
            ])
            let request = RetryFixture.request(.post, policy: .standard)
            let error = await RetryFixture.networkError { try await RetryFixture.client(stub).send(request) }
            #expect((error.map { NetworkError.Kind.transport == $0.kind }) == true, "\(String(describing: error))")
            #expect(stub.requests.map(\.httpMethod) == ["POST", "GET"])
        }

        @Test func keyedPostIsRetriedWithTheSameKey() async throws {
            let stub = StubTransport(responses: [
                .failure(URLError(.networkConnectionLost)), .success(RetryFixture.status(503)), .success(.status(201)),
            ])
            let policy = EndpointPolicy.standard.with(\.idempotency, .automatic)
            let response = try await RetryFixture.client(stub).response(for: RetryFixture.request(.post, policy: policy))
            #expect(response.statusCode == 201)
            let keys = stub.requests.map { $0.value(forHTTPHeaderField: "Idempotency-Key") }
            #expect(keys.count == 3)
            #expect(Set(keys).count == 1)
            #expect(keys.first.flatMap { $0 } == response.context.idempotencyKey)
            #expect(response.context.retryRecords.map(\.reason) == [.transport(.networkConnectionLost), .status(503)])
        }

        @Test func postWithAKeyHeaderSetByTheEndpointIsRetried() async throws {
            let stub = StubTransport(responses: [RetryFixture.status(503), .status(201)])
            let request = RetryFixture.request(.post, policy: .standard).header("Idempotency-Key", "order-77")
            let response = try await RetryFixture.client(stub).response(for: request)
            #expect(response.statusCode == 201)
            #expect(stub.requests.map { $0.value(forHTTPHeaderField: "Idempotency-Key") } == ["order-77", "order-77"])
        }

        @Test func keyedRetriesCanBeSwitchedOff() async throws {
            let stub = StubTransport(responses: [RetryFixture.status(503), .status(201)])
            let policy = EndpointPolicy.standard
                .with(\.idempotency, .automatic)
                .with(\.retry, RetryPolicy(retriesKeyedNonIdempotentRequests: false))
            let error = await RetryFixture.networkError {
                try await RetryFixture.client(stub).send(RetryFixture.request(.post, policy: policy))
            }
            #expect(error?.statusCode == 503)
            #expect(stub.requestCount == 1)
        }

        @Test func transientTransportFailureIsRetriedOthersAreNot() async throws {
            let transient = StubTransport(responses: [
                .failure(URLError(.timedOut)), .failure(URLError(.cannotConnectToHost)), .success(.status(200)),
            ])
            #expect(try await RetryFixture.client(transient).response(for: RetryFixture.get()).statusCode == 200)
            #expect(transient.requestCount == 3)

            let tls = StubTransport(responses: [.failure(URLError(.secureConnectionFailed)), .success(.status(200))])
            let error = await RetryFixture.networkError { try await RetryFixture.client(tls).send(RetryFixture.get()) }
            guard case .transport(let urlError)? = error else {
                Issue.record("expected a transport error, got \(String(describing: error))")
                return
            }
            #expect(urlError.code == .secureConnectionFailed)
            #expect(tls.requestCount == 1)
        }

        @Test func cancelledAttemptIsNeverRetried() async throws {
            let stub = StubTransport(responses: [.failure(URLError(.cancelled)), .success(.status(200))])
            let clock = TestClock()
            let error = await RetryFixture.networkError {
                try await RetryFixture.client(stub, clock: clock).send(RetryFixture.get())
            }
            #expect(error?.isCancellation == true)
            #expect(stub.requestCount == 1)
            #expect(clock.sleeps.isEmpty)
        }

        @Test func cancellationDuringTheWaitEndsTheCallAndSendsNothingMore() async throws {
            let stub = StubTransport(responses: [RetryFixture.status(503, retryAfter: "30"), .status(200)])
            let clock = TestClock(mode: .manual)
            let client = RetryFixture.client(stub, clock: clock)
            let call = Task { try await client.send(RetryFixture.get()) }
            try await clock.waitForSleepers(count: 1)
            #expect(clock.sleeps == [.seconds(30)])
            call.cancel()
            let result = await call.result
            guard case .failure(let error as NetworkError) = result, error.isCancellation else {
                Issue.record("expected NetworkError.cancelled, got \(result)")
                return
            }
            #expect(stub.requestCount == 1)
            #expect(clock.sleeperCount == 0)
        }

        @Test func waitPastTheDeadlineIsNotStarted() async throws {
            let stub = StubTransport(responses: [RetryFixture.status(503, retryAfter: "5"), .status(200)])
            let clock = TestClock()
            let policy = EndpointPolicy.standard.with(\.deadline, .seconds(2))
            let error = await RetryFixture.networkError {
                try await RetryFixture.client(stub, clock: clock).send(RetryFixture.get(policy: policy))
            }
            #expect(error?.statusCode == 503)
            #expect(stub.requestCount == 1)
            #expect(clock.sleeps.isEmpty)
        }

        @Test func waitsCountAgainstTheDeadlineOnTheInjectedClock() async throws {
            // Deadline 2.5 s: the first 1 s wait fits, after it a second 2 s wait would not.
            let stub = StubTransport(responses: [
                RetryFixture.status(503, retryAfter: "1"), RetryFixture.status(503, retryAfter: "2"), .status(200),
            ])
            let clock = TestClock()
            let policy = EndpointPolicy.standard.with(\.deadline, .milliseconds(2500))
            let error = await RetryFixture.networkError {
                try await RetryFixture.client(stub, clock: clock).send(RetryFixture.get(policy: policy))
            }
            #expect(error?.statusCode == 503)
            #expect(stub.requestCount == 2)
            #expect(clock.sleeps == [.seconds(1)])
        }

        @Test func retryableStatusThrownByAnInnerInterceptorIsRetried() async throws {
            struct FailOnce: Interceptor {
                let calls = CallCounter()
                func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
                    if calls.increment() == 1 {
                        throw NetworkError(response: RetryFixture.status(503, retryAfter: "2"))
                    }
                    return try await next(request)
                }
            }
            let stub = StubTransport(responses: [.status(200)])
            let clock = TestClock()
            let client = APIClient(environment: RetryFixture.environment) {
                $0.transport = stub
                $0.interceptors = [RetryInterceptor(clock: clock, random: { 0 }), FailOnce()]
            }
            #expect(try await client.response(for: RetryFixture.get()).statusCode == 200)
            #expect(clock.sleeps == [.seconds(2)])
            #expect(stub.requestCount == 1)
        }
    }
}

/// A thread-safe counter for test interceptors.
final class CallCounter: Sendable {
    private let count = Locked(0)
    /// Adds one and returns the new value.
    func increment() -> Int {
        count.withLock {
            $0 += 1
            return $0
        }
    }
    var value: Int { count.withLock { $0 } }
}
