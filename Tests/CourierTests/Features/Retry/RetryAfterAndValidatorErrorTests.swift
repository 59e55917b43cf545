import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension RetryTests {
    /// `Retry-After` sent more than once, a decider against `maxRetryAfter`, and what a validator's
    /// error means once retries are spent.
    @Suite struct RetryAfterAndValidatorErrors {
        static func response(_ status: Int, retryAfter: [String]) -> HTTPResponse {
            var headers = HTTPHeaders()
            for value in retryAfter { headers.add("Retry-After", value) }
            return .status(status, headers: headers)
        }

        /// Two `Retry-After: 5` fields (a proxy and the origin both set it) are joined to "5, 5",
        /// which does not parse, so the backoff (full jitter, here 0 s) is used: the next attempt
        /// goes out earlier than the server asked (RFC 9110 §10.2.3).
        @Test func repeatedRetryAfterFieldIsStillHonoured() async throws {
            let clock = TestClock()
            let stub = StubTransport(responses: [Self.response(503, retryAfter: ["5", "5"]), .status(200)])
            let client = StandardClientFixture.client(stub, retry: RetryInterceptor(clock: clock, random: { 0 }))
            _ = try await client.send(Request.raw(.get, "/x").expecting(200))
            #expect(stub.requestCount == 2)
            #expect(clock.sleeps.allSatisfy { $0 >= .seconds(5) })
        }

        /// README: "a wait longer than `maxRetryAfter` … stops retrying at once (the error carries
        /// the wait)". A `RetryDecider` that answers `.retry(after: .zero)` lifts that limit: the
        /// client sleeps 120 s although the policy accepts at most 60 s. The decider's doc lists the
        /// limits it cannot lift and `maxRetryAfter` is not among them; the README says otherwise.
        @Test func deciderCannotLiftMaxRetryAfter() async throws {
            let clock = TestClock()
            let stub = StubTransport(responses: [Self.response(503, retryAfter: ["120"]), .status(200)])
            let decider = RetryDecider { _, _ in .retry(after: .zero) }
            let client = StandardClientFixture.client(stub, retry: RetryInterceptor(clock: clock, decider: decider))
            let policy = EndpointPolicy.standard.with(\.deadline, .seconds(600))
            let error = await StandardClientFixture.networkError {
                try await client.send(Request<Item>.get("/x", policy: policy))
            }
            #expect(stub.requestCount == 1)
            #expect(clock.sleeps.isEmpty)
            #expect(error?.retryAfter == .seconds(120))
        }

        /// A validator's own error (even a non-retryable one) reaches the caller as
        /// `.decoding` with `kind == .typeMismatch` when the body is valid JSON: the UI is told the
        /// app and server disagree on a contract, while the validator said something else.
        @Test func validatorErrorIsNotReportedAsTypeMismatch() async throws {
            struct Maintenance: Error {}
            let stub = StubTransport(responses: [.json(#"{"id": 1, "name": "Lamp"}"#)])
            let validator = AnyResponseValidator { _, _ in throw Maintenance() }
            let client = StandardClientFixture.client(stub, validators: [validator])
            let error = await StandardClientFixture.networkError { try await client.send(Request<Item>.get("/items/1")) }
            let failure = StandardClientFixture.decodingFailure(error)
            #expect(failure?.kind != .typeMismatch)
        }

        /// Retryable validator error on a GET: retried, and after the retries are spent the error
        /// is still a `typeMismatch` decoding failure (same cause as above).
        @Test func exhaustedRetryableValidatorErrorKeepsItsMeaning() async throws {
            struct NotReadyYet: RetryableError { var isRetryable: Bool { true } }
            let clock = TestClock()
            let stub = StubTransport(responses: Array(repeating: .json(#"{"id": 1, "name": "Lamp"}"#), count: 3))
            let validator = AnyResponseValidator { _, _ in throw NotReadyYet() }
            let client = StandardClientFixture.client(stub, retry: RetryInterceptor(clock: clock), validators: [validator])
            let error = await StandardClientFixture.networkError { try await client.send(Request<Item>.get("/items/1")) }
            #expect(stub.requestCount == 3)
            #expect(StandardClientFixture.decodingFailure(error)?.kind != .typeMismatch)
        }
    }
}
