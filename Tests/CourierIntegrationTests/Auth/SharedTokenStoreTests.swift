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

        /// Both hold an expired access token and call at once, each manager on its own
        /// `FileTokenStore` value of one file (each opens the lock file itself, as two processes
        /// do). The server takes 0.3 s per refresh: one refresh is sent, the other manager waits
        /// for the lock and uses the pair the first stored — one refresh at the server, where two
        /// would have spent the same refresh token twice.
        @Test func twoManagersOnOneTokenFileSendOneRefresh() async throws {
            let shared = try SharedTokenFile.make("shared-file")
            defer { shared.removeFolder() }
            let app = try shared.process()
            _ = try await shared.signIn(app, as: "alice", accessTtl: -60)
            try await shared.configure(["accessTtl": 3600, "refreshDelay": 0.3])
            let appClient = app.client
            let extensionClient = try shared.process().client

            async let viaApp = appClient.send(AuthSession.me)
            async let viaExtension = extensionClient.send(AuthSession.me)
            let (a, b) = try await (viaApp, viaExtension)
            #expect(a.username == "alice" && b.username == "alice")
            #expect(a.jti == b.jti)

            let stats = try await shared.stats()
            #expect(stats.refreshCalls == 1)
            #expect(stats.refreshSuccesses == 1)
            #expect(stats.authorized == 2)
        }

        /// Tokens stored by a version before grant IDs (no `grant_id` in the file), expired. The
        /// extension has read them; the app refreshes first (the refresh token rotates), then the
        /// extension's call needs a refresh: holding the lock, it finds the app's pair — the first
        /// refresh of that sign-in, not another user's — and its call goes on as alice with it,
        /// where it failed with `NetworkError.signedOut`. One refresh at the server.
        @Test func theFirstRefreshOfTokensStoredWithoutAGrantIDIsAdoptedByTheOtherProcess() async throws {
            let shared = try SharedTokenFile.make("shared-legacy")
            defer { shared.removeFolder() }
            let file = shared.file
            let app = try shared.process()
            let appClient = app.client
            let legacy = try await shared.login(app, accessTtl: -60)
            #expect(legacy.grantID == nil)
            try FileTokenStore(fileURL: file).write(legacy)  // as the previous version wrote it
            try await shared.configure(["accessTtl": 3600])
            let appExtension = try shared.process()
            let extensionClient = appExtension.client
            #expect(try await appExtension.manager.isSignedIn())  // the extension has read the legacy pair

            let viaApp = try await appClient.send(AuthSession.me)
            let refreshed = try #require(try FileTokenStore(fileURL: file).read())
            #expect(refreshed.refreshToken != legacy.refreshToken)
            let viaExtension = try await extensionClient.send(AuthSession.me)  // not NetworkError.signedOut
            #expect(viaApp.username == "alice" && viaExtension.username == "alice")
            #expect(viaApp.jti == viaExtension.jti)
            #expect(try FileTokenStore(fileURL: file).read() == refreshed)

            let stats = try await shared.stats()
            #expect(stats.refreshCalls == 1)
            #expect(stats.authorized == 2)
        }
    }
}
