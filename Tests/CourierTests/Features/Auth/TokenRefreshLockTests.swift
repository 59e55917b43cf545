import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension AuthTests {
    /// Processes sharing one token store refresh one at a time (`TokenRefreshLock`: `flock(2)` on
    /// a lock file). Two `TokenManager`s on two `FileTokenStore` values of one file stand for the
    /// app and its extension: each opens the lock file itself, as two processes do, and the kernel
    /// keeps their locks apart. The fake server's refresh tokens are single use.
    @Suite(.timeLimit(.minutes(1))) struct TokenRefreshLockTests {
        static func withTokenFile(_ body: (URL) async throws -> Void) async throws {
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("courier-refresh-lock-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            try await body(directory.appendingPathComponent("tokens.json"))
        }

        /// Both need a refresh at once. The app's is at the server (holding the lock) when the
        /// extension's starts: the extension waits, finds the app's new pair in the store, and
        /// sends nothing — one refresh at the server, where two would spend refresh-1 twice.
        @Test func aRefreshWaitsForAnotherProcesssAndUsesItsTokens() async throws {
            try await Self.withTokenFile { file in
                let gate = AsyncGate()
                let server = FakeAuthServer(refreshGate: gate)
                let app = FakeAuthServer.tokenManager(server.makeTransport(), store: FileTokenStore(fileURL: file))
                try await app.signIn(server.signIn())
                let appExtension = FakeAuthServer.tokenManager(server.makeTransport(), store: FileTokenStore(fileURL: file))
                let spent = try #require(try await appExtension.validAccessToken())

                let appRefresh = Task { try await app.refresh(failedToken: spent) }
                await AuthFixture.eventually { server.refreshCalls == 1 }  // at the server, the lock held
                let extensionRefresh = Task { try await appExtension.refresh(failedToken: spent) }
                await AuthFixture.eventually { await appExtension.pendingRefreshWaiters == 1 }
                await gate.open()

                let fresh = try await appRefresh.value
                #expect(try await extensionRefresh.value == fresh)
                #expect(server.refreshCalls == 1)
                #expect(await appExtension.refreshCount == 1)  // started, never sent
                #expect(try FileTokenStore(fileURL: file).read()?.refreshToken == "refresh-2")
                #expect(server.isLive(refreshToken: "refresh-2"))
                #expect(try await appExtension.validAccessToken() == fresh)
            }
        }

        /// The extension read refresh-1 earlier; the app has refreshed since (the lock is free
        /// again). The extension's refresh after a 401 reads the store under the lock, takes the
        /// app's pair and sends nothing: a server that revokes a sign-in whose spent refresh token
        /// comes back (RFC 9700 §4.14.2) never sees refresh-1 again.
        @Test func aRefreshWithAStaleTokenTakesTheOneAnotherProcessStored() async throws {
            try await Self.withTokenFile { file in
                let server = FakeAuthServer()
                let app = FakeAuthServer.tokenManager(server.makeTransport(), store: FileTokenStore(fileURL: file))
                try await app.signIn(server.signIn())
                let appExtension = FakeAuthServer.tokenManager(server.makeTransport(), store: FileTokenStore(fileURL: file))
                let old = try #require(try await appExtension.validAccessToken())
                let fresh = try await app.refresh(failedToken: old)

                #expect(try await appExtension.refresh(failedToken: old) == fresh)
                #expect(server.refreshCalls == 1)
                #expect(server.isLive(refreshToken: "refresh-2"))
            }
        }

        /// `sharingRefreshes(lockFile:)` gives any store the lock: the same one-refresh outcome
        /// for two managers on one in-memory store.
        @Test func anyStoreSharesRefreshesThroughALockFile() async throws {
            try await Self.withTokenFile { file in
                let lockFile = file.deletingLastPathComponent().appendingPathComponent("tokens.lock")
                let gate = AsyncGate()
                let server = FakeAuthServer(refreshGate: gate)
                let shared = InMemoryTokenStore()
                let app = FakeAuthServer.tokenManager(server.makeTransport(), store: shared.sharingRefreshes(lockFile: lockFile))
                try await app.signIn(server.signIn())
                let appExtension = FakeAuthServer.tokenManager(
                    server.makeTransport(), store: shared.sharingRefreshes(lockFile: lockFile))
                let spent = try #require(try await appExtension.validAccessToken())

                let appRefresh = Task { try await app.refresh(failedToken: spent) }
                await AuthFixture.eventually { server.refreshCalls == 1 }
                let extensionRefresh = Task { try await appExtension.refresh(failedToken: spent) }
                await AuthFixture.eventually { await appExtension.pendingRefreshWaiters == 1 }
                await gate.open()
                #expect(try await extensionRefresh.value == appRefresh.value)
                #expect(server.refreshCalls == 1)
            }
        }

        /// A lock held for longer than its wait limit (a process stuck mid-refresh) does not stop
        /// the refresh: it goes ahead without the lock once the limit has passed.
        @Test func aLockHeldPastItsWaitLimitIsNotWaitedForLonger() async throws {
            try await Self.withTokenFile { file in
                let lockFile = file.deletingLastPathComponent().appendingPathComponent("tokens.lock")
                let stuck = TokenRefreshLock(fileURL: lockFile)
                let held = try #require(await stuck.acquire())
                defer { held.release() }
                let server = FakeAuthServer()
                let store = InMemoryTokenStore().sharingRefreshes(lockFile: lockFile, waitLimit: .milliseconds(50))
                let manager = FakeAuthServer.tokenManager(server.makeTransport(), store: store)
                try await manager.signIn(server.signIn())
                let old = try #require(try await manager.validAccessToken())
                #expect(try await manager.refresh(failedToken: old) != old)
                #expect(server.refreshCalls == 1)
            }
        }
    }
}
