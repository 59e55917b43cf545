import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension RetryTests {
    /// A `RetryDecider` may retry what the policy would not, but never sooner than `Retry-After` and
    /// never a plain POST; a validator's `RetryableError` is retried, its other errors are not.
    @Suite struct DecidersAndValidators {
        static func client(_ stub: StubTransport, clock: TestClock = TestClock(), decider: RetryDecider) -> APIClient {
            StandardClientFixture.client(stub, retry: RetryInterceptor(clock: clock, random: { 0.5 }, decider: decider))
        }

        struct Terms: Error {}

        @Test func aDeciderCanWaitForSomethingAsyncAndThenRetryAFailureThePolicyWouldNot() async throws {
            let stub = StubTransport(responses: [.status(451), .status(200, body: "{}")])
            let asked = Locked(0)
            let decider = RetryDecider { failure, _ in
                asked.withLock { $0 += 1 }
                #expect(failure.proposal == .doNotRetry, "a 451 is not retryable by policy")
                await Task.yield()  // e.g. the user accepting new terms
                return failure.response?.statusCode == 451 ? .retry(after: .milliseconds(10)) : failure.proposal
            }
            let clock = TestClock()
            let response = try await Self.client(stub, clock: clock, decider: decider).response(for: Request<Data>.get("/x"))
            #expect(response.statusCode == 200)
            #expect(asked.current == 1)
            #expect(clock.sleeps == [.milliseconds(10)])
            #expect(response.context.retryRecords.map(\.delaySource) == [.decider])
        }

        @Test func aDeciderNeverUndercutsTheServersRetryAfter() async throws {
            let stub = StubTransport(responses: [.status(503, headers: ["Retry-After": "3"]), .status(200, body: "{}")])
            let clock = TestClock()
            let decider = RetryDecider { _, _ in .retry(after: .zero) }
            _ = try await Self.client(stub, clock: clock, decider: decider).send(Request<Data>.get("/x"))
            #expect(clock.sleeps == [.seconds(3)])
        }

        @Test func aDeciderCannotRetryAPlainPost() async throws {
            let stub = StubTransport(responses: [.status(503), .status(200)])
            let decider = RetryDecider { _, _ in .retry(after: .zero) }
            let error = await #expect(throws: NetworkError.self) {
                try await Self.client(stub, decider: decider).send(Request<Void>.post("/orders"))
            }
            #expect(error?.kind == .server)
            #expect(stub.requestCount == 1, "RFC 9110 §9.2.2: a POST without an idempotency key is sent once")
        }

        struct NotReady: RetryableError { var isRetryable: Bool { true } }

        @Test func aValidatorsRetryableErrorIsRetriedAndARejectedResponseIsNeverCached() async throws {
            let calls = Locked(0)
            let stub = StubTransport { _ in
                let n = calls.withLock {
                    $0 += 1
                    return $0
                }
                return .status(
                    200, body: n == 1 ? #"{"ready":false}"# : #"{"ready":true}"#, contentType: "application/json",
                    headers: ["Cache-Control": "max-age=60"])
            }
            let validator = AnyResponseValidator { response, _ in
                if response.bodySnippet().contains("false") { throw NotReady() }
            }
            let cache = HTTPCache()
            let client = APIClient(environment: StandardClientFixture.environment) {
                $0.transport = stub
                $0.validators = [validator]
                $0.interceptors = .standard(cache: cache, retry: RetryInterceptor(clock: TestClock(), random: { 0 }))
            }
            let first = try await client.send(Request<Data>.get("/job"))
            let second = try await client.response(for: Request<Data>.get("/job"))
            #expect(String(decoding: first, as: UTF8.self).contains("true"))
            #expect(stub.requestCount == 2)
            #expect(second.context.cacheOutcome == .hit)
        }

        @Test func aValidatorsOtherErrorIsADecodingFailureAndNotRetried() async throws {
            let stub = StubTransport { _ in .status(200, body: "{}") }
            let client = StandardClientFixture.client(stub) { $0.validators = [AnyResponseValidator { _, _ in throw Terms() }] }
            let error = await #expect(throws: NetworkError.self) { try await client.send(Request<Data>.get("/x")) }
            #expect(error?.kind == .decoding)
            #expect(stub.requestCount == 1)
        }
    }
}
