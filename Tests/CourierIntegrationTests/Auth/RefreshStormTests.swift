import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension AuthIntegrationTests {
    /// Many calls meet an expired access token at once: one refresh serves them all.
    @Suite(.timeLimit(.minutes(2))) struct RefreshStormTests {
        /// Proactive: every call sees the expired `exp` and waits for the one refresh; nothing is
        /// sent with the old token. Reactive: every call is held at the server with the old token
        /// until all are in flight, then all are refused with 401 together — one refresh, and each
        /// call is retried once with the new token.
        @Test(arguments: AuthSession.Mode.allCases, [5, 50])
        func parallelCallsWithAnExpiredTokenShareOneRefresh(mode: AuthSession.Mode, count: Int) async throws {
            let session = try await AuthSession.start(mode: mode, refreshDelay: 0.2)
            let oldJTI = try #require(AuthSession.jti(session.signedIn.accessToken))
            let gate = "storm"
            let request = mode == .proactive ? AuthSession.me : AuthSession.held(gate)
            let calls = (0..<count).map { _ in Task { try await session.client.response(for: request) } }
            if mode == .reactive {
                try await session.waitUntilHeld(count, gate: gate)
                try await session.open(gate)
            }
            var jtis: Set<String> = []
            for call in calls {
                let response = try await call.value
                #expect(response.value.username == "alice")
                #expect(response.response.headers["X-Auth-Jti"] == response.value.jti)
                jtis.insert(response.value.jti)
            }

            let stored = try #require(session.store.read())
            let newJTI = try #require(AuthSession.jti(stored.accessToken))
            #expect(jtis == [newJTI])  // every call succeeded with the one new token
            #expect(newJTI != oldJTI)
            #expect(stored.refreshToken != session.signedIn.refreshToken)  // the rotated refresh token

            let stats = try await session.stats()
            #expect(stats.refreshCalls == 1)
            #expect(stats.refreshSuccesses == 1)
            #expect(await session.manager.refreshCount == 1)
            switch mode {
            case .proactive:
                #expect(stats.requests("GET /me") == count)
                #expect(stats.unauthorized == 0)
            case .reactive:
                #expect(stats.requests("GET /protected/held/{gate}") == 2 * count)
                #expect(stats.unauthorized == count)
            }
            #expect(stats.authorized == count)

            // The stored refresh token is the live one: the server accepts it (single use).
            _ = try await session.manager.refresh(failedToken: nil)
            #expect(try await session.stats().refreshSuccesses == 2)
        }

        /// A request that left with the old token before the refresh, and is refused after it,
        /// is retried with the new token without a second refresh.
        @Test func lateUnauthorizedForTheOldTokenDoesNotRefreshAgain() async throws {
            let session = try await AuthSession.start(mode: .reactive)
            let oldJTI = AuthSession.jti(session.signedIn.accessToken)
            let late = Task { try await session.client.response(for: AuthSession.held("late")) }
            try await session.waitUntilHeld(1, gate: "late")

            let storm = (0..<5).map { _ in Task { try await session.client.send(AuthSession.me) } }
            for call in storm { _ = try await call.value }
            #expect(try await session.stats().refreshCalls == 1)
            let newJTI = AuthSession.jti(session.store.read()?.accessToken)
            #expect(newJTI != oldJTI)

            try await session.open("late")
            let response = try await late.value
            #expect(response.value.jti == newJTI)
            let stats = try await session.stats()
            #expect(stats.refreshCalls == 1)
            #expect(stats.requests("GET /protected/held/{gate}") == 2)  // refused once, retried once
            #expect(response.context.attempt == 2)
        }
    }
}
