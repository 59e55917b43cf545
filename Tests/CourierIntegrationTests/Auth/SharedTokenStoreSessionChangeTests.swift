import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension AuthIntegrationTests {
    /// An app and its extension on one token file (each manager with its own `FileTokenStore`
    /// value, as two processes have), against the reference server: the extension changes the
    /// session while the app's refresh is held at the server (`POST /auth/refresh?gate=`).
    @Suite(.timeLimit(.minutes(1))) struct SharedTokenStoreSessionChangeTests {
        typealias Setup = SharedTokenFile

        static func setUp() throws -> Setup { try SharedTokenFile.make("shared-change") }

        /// alice's app refreshes her expired token; while the refresh is at the server, bob signs
        /// in in the extension. The app's refresh answer must not overwrite bob's tokens in the
        /// store: a third process (another extension) that starts then acts as bob, and the app's
        /// waiting call ends as a call of a sign-in another one replaced (`signedOut`), never sent
        /// as alice again.
        @Test func aRefreshAnsweredAfterAnotherProcessSignedInAnotherUserLeavesThatUsersTokens() async throws {
            let setup = try Self.setUp()
            defer { setup.removeFolder() }
            let (app, appCall) = try await setup.aliceCallingWithHerRefreshHeld()

            let appExtension = try setup.process()
            let bob = try await setup.signIn(appExtension, as: "bob", accessTtl: 3600)
            try await setup.openGate()
            await #expect(throws: NetworkError.signedOut) { try await appCall.value }

            #expect(try FileTokenStore(fileURL: setup.file).read() == bob)
            let later = try setup.process()
            #expect(try await later.client.send(AuthSession.me).username == "bob")
            #expect(try await app.client.send(AuthSession.me).username == "bob")
            let stats = try await setup.stats()
            #expect(stats.refreshCalls == 1)
            #expect(stats.requests("GET /me") == 2)  // bob's two calls: alice's expired token was never sent
        }

        /// alice's app refreshes; while the refresh is at the server, she signs out in the
        /// extension. The app's refresh answer must not write her tokens back: the store stays
        /// empty, and the app is signed out too.
        @Test func aRefreshAnsweredAfterAnotherProcessSignedOutDoesNotSignTheUserBackIn() async throws {
            let setup = try Self.setUp()
            defer { setup.removeFolder() }
            let (app, appCall) = try await setup.aliceCallingWithHerRefreshHeld()

            let appExtension = try setup.process()
            #expect(try await appExtension.manager.isSignedIn())
            try await appExtension.manager.signOut()
            try await setup.openGate()
            await #expect(throws: NetworkError.signedOut) { try await appCall.value }

            #expect(try FileTokenStore(fileURL: setup.file).read() == nil)
            #expect(try await !setup.process().manager.isSignedIn())
            #expect(try await !app.manager.isSignedIn())
            let stats = try await setup.stats()
            #expect(stats.refreshCalls == 1)
            #expect(stats.requests("GET /me") == 0)
        }
    }
}
