import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// Every attempt of one call goes out under one sign-in.
@Suite("Auth: a retry never goes out under another sign-in", .timeLimit(.minutes(1)))
struct RetrySignInTests {
    struct Me: Decodable, Sendable { var username: String }

    /// Alice's `GET /me` gets a 503; while the retry waits its backoff, Alice signs out and Bob
    /// signs in. The retry must not go out with Bob's token: the call ends as signed out, one
    /// request on the server. It used to be retried as Bob and return Bob's profile to Alice's call.
    @Test func aRetryAfterAnotherSignInIsNotSent() async throws {
        let session = try await SignInSwitch.start("retry-signin", clockDrivesClient: false) {
            RetryInterceptor(clock: $0, random: { 1 }, budget: nil, circuitBreaker: nil)
        }
        let (client, clock, namespace) = (session.client, session.clock, session.namespace)
        let (status, _) = try await TestServers.control(
            "POST", "_faults", namespace: namespace, json: ["method": "GET", "path": "/me", "faults": [["status": 503]]])
        #expect(status == 200)
        let retry = RetryPolicy(maxRetries: 2, baseDelay: .seconds(1), maxDelay: .seconds(1), jitter: .none)
        let call = Task {
            try await client.send(Request<Me>.get("/me", policy: EndpointPolicy.authorizedRead.with(\.retry, retry)))
        }
        try await clock.waitForSleepers(count: 1)
        try await session.switchToBob(thenAdvanceBy: .seconds(1))

        let failure = await #expect(throws: NetworkError.self) { _ = try await call.value }
        #expect(failure?.kind == .signedOut, "\(String(describing: failure))")
        #expect(try await TestServers.requestLog(namespace: namespace, path: "/me").count == 1)
        // Bob's own calls are unaffected.
        #expect(try await client.send(Request<Me>.get("/me", policy: .authorizedRead)).username == "bob")
    }
}
