import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// "A call never leaves without the token or key its endpoint declared."
    @Suite struct PolicyPromises {
        struct Me: Endpoint {
            typealias Response = HTTPResponse
            var path: String { "/me" }
            var policy: EndpointPolicy { .authorizedRead }
        }

        struct CreateOrder: Endpoint {
            typealias Response = HTTPResponse
            var path: String { "/orders" }
            var method: HTTPMethod { .post }
            var policy: EndpointPolicy { .standard.with(\.idempotency, .automatic) }
        }

        /// `response(for:context:)` checks the *endpoint's* policy for missing interceptors, but the
        /// pipeline (AuthInterceptor) reads the *context's* policy: a caller-made context with the
        /// default policy sends an `auth: .required` endpoint without its token.
        @Test func authorizedCallDoesNotJoinAnAnonymousCallInFlight() async throws {
            let gate = TransportGate()
            let stub = StubTransport { _ in
                await gate.wait()
                return .status(200, body: "{}", contentType: "application/json")
            }
            let dedup = DeduplicationInterceptor(partition: { "shared" })
            let client = APIClient(environment: StandardClientFixture.environment) {
                $0.transport = stub
                $0.interceptors = [
                    RequestIDInterceptor(), dedup, RetryInterceptor(clock: TestClock()),
                    AuthInterceptor(tokenManager: StandardClientFixture.signedInManager()), IdempotencyInterceptor(),
                ]
            }
            let anonymous = Task { try await client.send(Request.raw(.get, "/feed", policy: .standard)) }
            for _ in 0..<1_000 where stub.requestCount < 1 { await Task.yield() }
            let authorized = Task { try await client.send(Request.raw(.get, "/feed", policy: .authorizedRead)) }
            for _ in 0..<1_000 where dedup.waitingCount < 2 && stub.requestCount < 2 { await Task.yield() }
            await gate.open()
            _ = try await anonymous.value
            _ = try await authorized.value
            let tokens = stub.requests.compactMap { $0.value(forHTTPHeaderField: "Authorization") }
            #expect(tokens == ["Bearer tok-SECRET-123"])
        }

        /// `AuthRequirement.required`'s doc says a signed-out call fails with `.unauthorized` and
        /// that without an AuthInterceptor "no token is added" — both stale: it is `.signedOut` and
        /// `.missingInterceptor`. (Documents the behaviour; passes.)
        @Test func requiredAuthWithoutInterceptorFailsLocally() async throws {
            let stub = StubTransport(responses: [.status(200)])
            let client = StandardClientFixture.client(stub)
            let error = await StandardClientFixture.networkError { try await client.send(Me()) }
            #expect(error?.kind == .missingInterceptor)
            #expect(stub.requestCount == 0)
        }
    }
}
