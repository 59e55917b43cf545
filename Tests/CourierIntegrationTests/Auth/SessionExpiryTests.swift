import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension AuthIntegrationTests {
    /// The refresh endpoint refuses (`invalid_grant`) or fails transiently (503).
    @Suite(.timeLimit(.minutes(2))) struct SessionExpiryTests {
        @Test(arguments: AuthSession.Mode.allCases)
        func invalidGrantClearsTheStorePublishesTheEventAndFailsEveryWaiter(mode: AuthSession.Mode) async throws {
            let session = try await AuthSession.start(mode: mode, refreshDelay: 0.2)
            let (status, _) = try await TestServers.control(
                "POST", "auth/config", namespace: session.namespace, json: ["refreshFails": "invalid_grant"])
            #expect(status == 200)
            let firstObserver = session.manager.events()
            let secondObserver = session.manager.events()

            let count = 10
            let request = mode == .proactive ? AuthSession.me : AuthSession.held("expiry")
            let calls = (0..<count).map { _ in Task { try await session.client.send(request) } }
            if mode == .reactive {
                try await session.waitUntilHeld(count, gate: "expiry")
                try await session.open("expiry")
            }
            for call in calls {
                let result = await call.result
                guard case .failure(NetworkError.sessionExpired) = result else {
                    Issue.record("expected sessionExpired, got \(result)")
                    continue
                }
            }

            #expect(session.store.read() == nil)
            let expected = SessionEvent.sessionExpired(
                TokenRefreshRejection(
                    statusCode: 400, error: "invalid_grant", errorDescription: "Forced refresh failure"))
            var first = firstObserver.makeAsyncIterator()
            var second = secondObserver.makeAsyncIterator()
            #expect(await first.next() == expected)
            #expect(await second.next() == expected)
            #expect(try await session.stats().refreshCalls == 1)

            // Signed out now: a required call fails locally, nothing reaches the server.
            let before = try await session.stats().int("totalRequests")
            do {
                _ = try await session.client.send(AuthSession.me)
                Issue.record("expected signedOut")
            } catch let error as NetworkError {
                #expect(error == .signedOut)
            }
            #expect(try await session.stats().int("totalRequests") == before)
        }

        @Test func transientRefreshFailureKeepsTheUserSignedIn() async throws {
            let session = try await AuthSession.start(mode: .proactive)
            let events = session.manager.events()
            try await TestServers.control("POST", "auth/config", namespace: session.namespace, json: ["refreshFails": "503"])
            let noRetry = AuthSession.me.policy(EndpointPolicy.authorizedRead.with(\.retry, .none))
            do {
                _ = try await session.client.send(noRetry)
                Issue.record("expected the refresh's 503")
            } catch let error as NetworkError {
                #expect(error.statusCode == 503)
            }
            #expect(session.store.read() == session.signedIn)

            // The server recovers: the same (unspent) refresh token works.
            try await TestServers.control("POST", "auth/config", namespace: session.namespace, json: ["refreshFails": NSNull()])
            let me = try await session.client.send(noRetry)
            #expect(me.username == "alice")
            let stats = try await session.stats()
            #expect(stats.refreshCalls == 2)
            #expect(stats.refreshSuccesses == 1)
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next() == .refreshed)  // no sessionExpired before it
        }

        @Test func transientRefreshFailureIsNotRetriedByTheCall() async throws {
            let session = try await AuthSession.start(mode: .proactive)
            try await TestServers.control("POST", "auth/config", namespace: session.namespace, json: ["refreshFails": "503"])
            // authorizedRead retries a 503 of its own request, not the token endpoint's: another
            // attempt would only refresh again. One refresh, no GET /me sent without a token.
            do {
                _ = try await session.client.send(AuthSession.me)
                Issue.record("expected the refresh's 503")
            } catch let error as NetworkError {
                #expect(error.statusCode == 503)
            }
            let stats = try await session.stats()
            #expect(stats.refreshCalls == 1)
            #expect(stats.requests("GET /me") == 0)
            #expect(session.store.read() == session.signedIn)
        }
    }
}
