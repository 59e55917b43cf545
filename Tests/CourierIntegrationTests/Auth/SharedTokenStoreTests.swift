import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension AuthIntegrationTests {
    /// An app and its extension: two token managers and two clients, each with its own transport,
    /// on one token store, against the reference server, which rotates refresh tokens and refuses
    /// a spent one.
    @Suite(.timeLimit(.minutes(1))) struct SharedTokenStoreTests {
        /// Both hold an expired access token. The extension's call refreshes first (the refresh
        /// token rotates); the app's call is refused, its refresh of the spent token is refused,
        /// and it is sent again with the extension's access token: alice's call succeeds, the
        /// session goes on, and the store keeps the extension's pair.
        @Test func theAppsCallGoesOnWithTheTokenItsExtensionRefreshed() async throws {
            let session = try await AuthSession.start(mode: .reactive)
            let environment = try TestServers.apiEnvironment(namespace: session.namespace)
            let transport = TestTransport.make()
            let extensionManager = TokenManager(
                store: session.store, transport: transport,
                grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("auth/refresh")),
                now: { Date.distantPast })
            let extensionClient = APIClient(environment: environment) {
                $0.transport = transport
                $0.interceptors = .standard(tokenManager: extensionManager, retry: RetryInterceptor(clock: TestClock()))
            }

            let viaExtension = try await extensionClient.send(AuthSession.me)
            let rotated = try #require(session.store.read())
            #expect(rotated.refreshToken != session.signedIn.refreshToken)
            #expect(rotated.grantID == session.signedIn.grantID)

            let viaApp = try await session.client.send(AuthSession.me)  // not NetworkError.unauthorized
            #expect(viaApp.username == "alice")
            #expect(viaApp.jti == viaExtension.jti)
            #expect(try await session.manager.isSignedIn())
            #expect(session.store.read() == rotated)

            let stats = try await session.stats()
            #expect(stats.refreshCalls == 2)  // the extension's, and the app's spent one
            #expect(stats.refreshSuccesses == 1)
            #expect(stats.requests("GET /me") == 4)  // each: a 401, then the call with the new token
            #expect(stats.unauthorized == 2)
            #expect(stats.authorized == 2)
        }
    }
}
