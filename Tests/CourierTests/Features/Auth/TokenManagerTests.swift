import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension AuthTests {
    /// `TokenManager` against an in-process fake token endpoint.
    @Suite(.timeLimit(.minutes(1))) struct TokenManagerTests {
        @Test(arguments: [5, 50])
        func concurrentRefreshesShareOneRequest(_ callers: Int) async throws {
            let gate = AsyncGate()
            let server = FakeAuthServer(refreshGate: gate)
            let transport = server.makeTransport()
            let initial = server.signIn()
            let store = InMemoryTokenStore(initial)
            let manager = FakeAuthServer.tokenManager(transport, store: store)

            let tasks = (0..<callers).map { _ in
                Task { try await manager.refresh(failedToken: initial.accessToken) }
            }
            await AuthFixture.eventually { await manager.pendingRefreshWaiters == callers }
            await gate.open()
            var tokens: Set<String> = []
            for task in tasks { tokens.insert(try await task.value) }

            #expect(server.refreshCalls == 1)
            #expect(transport.requestCount == 1)
            #expect(await manager.refreshCount == 1)
            let stored = try #require(store.read())
            #expect(tokens == [stored.accessToken])
            #expect(stored.accessToken != initial.accessToken)
            #expect(stored.refreshToken == "refresh-2")  // the rotated one…
            #expect(server.isLive(refreshToken: "refresh-2"))
            #expect(!server.isLive(refreshToken: "refresh-1"))  // …and the old one is spent
        }

        @Test func lateFailureWithAnOldTokenDoesNotRefreshAgain() async throws {
            let server = FakeAuthServer()
            let transport = server.makeTransport()
            let initial = server.signIn()
            let store = InMemoryTokenStore(initial)
            let manager = FakeAuthServer.tokenManager(transport, store: store)
            let fresh = try await manager.refresh(failedToken: initial.accessToken)
            let late = try await manager.refresh(failedToken: initial.accessToken)
            #expect(late == fresh)
            #expect(server.refreshCalls == 1)
        }

        @Test func nilFailedTokenForcesARefresh() async throws {
            let server = FakeAuthServer()
            let transport = server.makeTransport()
            let manager = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore(server.signIn()))
            _ = try await manager.refresh(failedToken: nil)
            _ = try await manager.refresh(failedToken: nil)
            #expect(server.refreshCalls == 2)
        }

        @Test func refreshRequestIsAnOAuthRefreshGrantSentStraightToTheTransport() async throws {
            let server = FakeAuthServer()
            let transport = server.makeTransport()
            let manager = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore(server.signIn()))
            _ = try await manager.refresh(failedToken: nil)
            let request = try #require(transport.requests.first)
            #expect(request.httpMethod == "POST")
            #expect(request.url == AuthFixture.tokenURL)
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
            #expect(request.value(forHTTPHeaderField: "Authorization") == nil)
            #expect(
                String(decoding: request.httpBody ?? Data(), as: UTF8.self) == "grant_type=refresh_token&refresh_token=refresh-1")
        }

        // MARK: Proactive refresh

        @Test func tokenExpiringWithinTheLeewayIsRefreshedBeforeUse() async throws {
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let server = FakeAuthServer(now: now)
            let transport = server.makeTransport()
            let initial = server.signIn(accessExpiresAt: now.addingTimeInterval(20))
            let manager = FakeAuthServer.tokenManager(
                transport, store: InMemoryTokenStore(initial), leeway: .seconds(30), now: { now })
            let token = try await manager.validAccessToken()
            #expect(token != nil)
            #expect(token != initial.accessToken)
            #expect(server.refreshCalls == 1)
        }

        /// A refreshed token's `expires_in` counts from the manager's clock (here a day ahead of
        /// the real one), not from `Date()`: refreshed when due by that clock, not hours off.
        @Test func aRefreshedTokensExpiryCountsFromTheManagersClock() async throws {
            let base = Date().addingTimeInterval(86_400)
            let clock = Locked(base.addingTimeInterval(3590))  // within the leeway of the first token
            let server = FakeAuthServer(now: base)
            let store = InMemoryTokenStore(server.signIn(accessExpiresAt: base.addingTimeInterval(3600)))
            let manager = FakeAuthServer.tokenManager(server.makeTransport(), store: store, now: { clock.current })

            _ = try await manager.validAccessToken()
            #expect(server.refreshCalls == 1)
            let expected = base.addingTimeInterval(3590 + 3600)  // expires_in 3600 from the manager's now
            let expiry = try #require(store.read()?.expiresAt)
            #expect(abs(expiry.timeIntervalSince(expected)) < 0.001)

            clock.set(expected.addingTimeInterval(-10))  // due by the manager's clock
            _ = try await manager.validAccessToken()
            #expect(server.refreshCalls == 2)
        }

        @Test func tokenOutsideTheLeewayIsUsedAsIs() async throws {
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let server = FakeAuthServer(now: now)
            let transport = server.makeTransport()
            let initial = server.signIn(accessExpiresAt: now.addingTimeInterval(31))
            let manager = FakeAuthServer.tokenManager(
                transport, store: InMemoryTokenStore(initial), leeway: .seconds(30), now: { now })
            #expect(try await manager.validAccessToken() == initial.accessToken)
            #expect(server.refreshCalls == 0)
        }

        @Test func theLeewayNeverExceedsHalfTheTokensLifetime() async throws {
            func jwt(issuedAt: Date, expiresAt: Date) -> String {
                let (iat, exp) = (issuedAt.timeIntervalSince1970, expiresAt.timeIntervalSince1970)
                let payload = #"{"sub":"alice","iat":\#(iat),"exp":\#(exp)}"#
                let encoded = Data(payload.utf8).base64EncodedString()
                    .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                    .replacingOccurrences(of: "=", with: "")
                return "eyJhbGciOiJIUzI1NiJ9.\(encoded).c2ln"
            }
            let issued = Date(timeIntervalSince1970: 1_800_000_000)
            // A 40 s token: refreshed 20 s before it expires (half its life), not 30 s.
            let token = AuthTokens(accessToken: jwt(issuedAt: issued, expiresAt: issued + 40), refreshToken: "refresh-1")
            for (elapsed, refreshes) in [(15.0, 0), (21.0, 1)] {
                let server = FakeAuthServer(now: issued + elapsed)
                _ = server.signIn()
                let manager = FakeAuthServer.tokenManager(
                    server.makeTransport(), store: InMemoryTokenStore(token), leeway: .seconds(30), now: { issued + elapsed })
                _ = try await manager.validAccessToken()
                #expect(server.refreshCalls == refreshes, "\(elapsed) s after issue")
            }
        }

        @Test func aShortLivedOpaqueTokenIsNotRefreshedOnEveryCall() async throws {
            let now = Locked(Date(timeIntervalSince1970: 1_800_000_000))
            let server = FakeAuthServer(now: now.current)
            _ = server.signIn()
            let manager = FakeAuthServer.tokenManager(
                server.makeTransport(), store: InMemoryTokenStore(nil), leeway: .seconds(30), now: { now.current })
            // Received now, expiring in 20 s: its lifetime is known, so the leeway is 10 s.
            try await manager.signIn(AuthTokens(accessToken: "opaque", refreshToken: "refresh-1", expiresAt: now.current + 20))
            for _ in 0..<3 { #expect(try await manager.validAccessToken() == "opaque") }
            #expect(server.refreshCalls == 0)
            now.withLock { $0 += 11 }
            _ = try await manager.validAccessToken()
            #expect(server.refreshCalls == 1)
        }

        @Test func opaqueTokenUsesExpiresAtOrNothing() async throws {
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let server = FakeAuthServer(now: now)
            let transport = server.makeTransport()
            _ = server.signIn()
            let opaque = AuthTokens(accessToken: "opaque", refreshToken: "refresh-1")
            let unknownExpiry = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore(opaque), now: { now })
            #expect(try await unknownExpiry.validAccessToken() == "opaque")
            #expect(server.refreshCalls == 0)

            var expiring = opaque
            expiring.expiresAt = now.addingTimeInterval(5)
            let known = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore(expiring), now: { now })
            #expect(try await known.validAccessToken() != "opaque")
            #expect(server.refreshCalls == 1)
        }

        @Test func transientProactiveFailureFallsBackToTheStillValidToken() async throws {
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let server = FakeAuthServer(now: now)
            server.setRefreshMode(.status(503, body: #"{"error":"temporarily_unavailable"}"#))
            let transport = server.makeTransport()
            let initial = server.signIn(accessExpiresAt: now.addingTimeInterval(10))
            let store = InMemoryTokenStore(initial)
            let manager = FakeAuthServer.tokenManager(transport, store: store, now: { now })
            #expect(try await manager.validAccessToken() == initial.accessToken)
            #expect(store.read() == initial)
        }

        @Test(arguments: [
            FakeAuthServer.RefreshMode.status(503, body: #"{"error":"temporarily_unavailable"}"#),
            .status(500, body: "oops"),
            .transportError(.notConnectedToInternet),
            .transportError(.timedOut),
        ])
        func transientFailureWithAnExpiredTokenFailsWithoutSigningOut(_ mode: FakeAuthServer.RefreshMode) async throws {
            let now = Date(timeIntervalSince1970: 1_800_000_000)
            let server = FakeAuthServer(now: now)
            server.setRefreshMode(mode)
            let transport = server.makeTransport()
            let initial = server.signIn(accessExpiresAt: now.addingTimeInterval(-1))
            let store = InMemoryTokenStore(initial)
            let manager = FakeAuthServer.tokenManager(transport, store: store, now: { now })
            let events = manager.events()
            do {
                _ = try await manager.validAccessToken()
                Issue.record("expected the refresh failure")
            } catch let error as NetworkError {
                switch (mode, error) {
                case (.status(let status, _), _): #expect(error.statusCode == status)
                case (.transportError(.notConnectedToInternet), .offline): break
                case (.transportError(.timedOut), .timedOut): break
                default: Issue.record("unexpected error \(error)")
                }
            }
            #expect(store.read() == initial)
            #expect(try await manager.isSignedIn())
            try await manager.signOut()
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next() == .signedOut)  // no sessionExpired before it
        }

        // MARK: Session expiry

        @Test(arguments: [
            (400, #"{"error":"invalid_grant","error_description":"Refresh token already used"}"#, "invalid_grant"),
            (401, #"{"error":"invalid_client"}"#, "invalid_client"),
            (400, "not json", nil),
        ])
        func refusedRefreshEndsTheSessionForEveryWaiter(status: Int, body: String, code: String?) async throws {
            let gate = AsyncGate()
            let server = FakeAuthServer(refreshGate: gate)
            server.setRefreshMode(.status(status, body: body))
            let transport = server.makeTransport()
            let initial = server.signIn()
            let store = InMemoryTokenStore(initial)
            let manager = FakeAuthServer.tokenManager(transport, store: store)
            let first = manager.events()
            let second = manager.events()

            let tasks = (0..<10).map { _ in Task { try await manager.refresh(failedToken: initial.accessToken) } }
            await AuthFixture.eventually { await manager.pendingRefreshWaiters == 10 }
            await gate.open()
            for task in tasks {
                let result = await task.result
                guard case .failure(NetworkError.sessionExpired) = result else {
                    Issue.record("expected sessionExpired, got \(result)")
                    continue
                }
            }
            #expect(store.read() == nil)
            #expect(server.refreshCalls == 1)
            #expect(try await manager.validAccessToken() == nil)
            let expected = SessionEvent.sessionExpired(
                TokenRefreshRejection(
                    statusCode: status, error: code,
                    errorDescription: code == "invalid_grant" ? "Refresh token already used" : nil))
            var firstIterator = first.makeAsyncIterator()
            var secondIterator = second.makeAsyncIterator()
            #expect(await firstIterator.next() == expected)
            #expect(await secondIterator.next() == expected)
        }

        /// The app and its extension share one store. The app's refresh of refresh-1 is out when
        /// the extension refreshes first (refresh-1 → refresh-2) and stores the new pair; the
        /// server refuses the app's spent refresh-1: the app takes in the extension's pair instead
        /// of wiping it and ending the session.
        @Test func aRefusedRefreshTakesInTheNewerTokensAnotherProcessStored() async throws {
            let server = FakeAuthServer()
            let initial = server.signIn()
            let store = InMemoryTokenStore(initial)
            let appGate = AsyncGate()
            let appTransport = StubTransport { request in
                await appGate.wait()
                return try await server.handle(request)
            }
            let app = FakeAuthServer.tokenManager(appTransport, store: store)
            let appExtension = FakeAuthServer.tokenManager(server.makeTransport(), store: store)

            let appRefresh = Task { try await app.refresh(failedToken: initial.accessToken) }
            await AuthFixture.eventually { await app.pendingRefreshWaiters == 1 }
            let fresh = try await appExtension.refresh(failedToken: initial.accessToken)
            await appGate.open()
            #expect(try await appRefresh.value == fresh)  // not NetworkError.sessionExpired

            #expect(server.refreshCalls == 2)  // the app's was refused
            #expect(store.read()?.refreshToken == "refresh-2")
            #expect(try await app.validAccessToken() == fresh)
        }

        /// The app and its extension share one store and the server rotates refresh tokens. The
        /// app's call waits for its refresh of refresh-1 when the extension refreshes first: the
        /// server refuses the app's spent token, and the app's call goes on with the extension's
        /// access token — the same sign-in (one grant ID), not another user's. With
        /// `reloadsMeanwhile`, the app reloads the store while its refresh is out: the reload takes
        /// the rotated pair in as a refresh of the sign-in, and the refused refresh hands the
        /// waiters its access token instead of ending the session.
        @Test(arguments: [false, true])
        func aRefreshRefusedAfterAnotherProcessRotatedTheTokenKeepsTheCallsOfTheSignIn(reloadsMeanwhile: Bool) async throws {
            let server = FakeAuthServer()
            let store = InMemoryTokenStore()
            let appGate = AsyncGate()
            let appTransport = StubTransport { request in
                await appGate.wait()
                return try await server.handle(request)
            }
            let app = FakeAuthServer.tokenManager(appTransport, store: store)
            try await app.signIn(server.signIn())
            let appExtension = FakeAuthServer.tokenManager(server.makeTransport(), store: store)
            let session = try #require(try await app.accessTokenAndSession())

            let appRefresh = Task { try await app.refresh(failedToken: session.token, session: session.session) }
            await AuthFixture.eventually { await app.pendingRefreshWaiters == 1 }
            let fresh = try await appExtension.refresh(failedToken: session.token)
            if reloadsMeanwhile {
                await app.reloadFromStore()
                #expect(app.currentSession == session.session)
            }
            await appGate.open()
            #expect(try await appRefresh.value == fresh)  // not nil: the request is sent again

            #expect(server.refreshCalls == 2)  // the app's was refused
            #expect(app.currentSession == session.session)
            #expect(try await app.validAccessToken() == fresh)
            let stored = try #require(store.read())  // the refused refresh cleared nothing
            #expect(stored.accessToken == fresh && stored.refreshToken == "refresh-2" && stored.grantID != nil)
        }

        /// Another process signing another user in (a new grant ID) is still another sign-in: the
        /// request made as the first user is not sent again with the new user's token.
        @Test func anotherProcesssSignInIsStillAnotherSessionWithGrantIDs() async throws {
            let server = FakeAuthServer()
            let store = InMemoryTokenStore()
            let app = FakeAuthServer.tokenManager(server.makeTransport(), store: store)
            try await app.signIn(server.signIn())
            let session = try #require(try await app.accessTokenAndSession())
            let appExtension = FakeAuthServer.tokenManager(server.makeTransport(), store: store)
            try await appExtension.signIn(server.signIn())  // Bob
            await app.reloadFromStore()
            #expect(app.currentSession != session.session)
            #expect(try await app.refresh(failedToken: session.token, session: session.session) == nil)
            #expect(server.refreshCalls == 0)
        }

        @Test func missingRefreshTokenEndsTheSession() async throws {
            let server = FakeAuthServer()
            let transport = server.makeTransport()
            let store = InMemoryTokenStore(AuthTokens(accessToken: "a", refreshToken: nil))
            let manager = FakeAuthServer.tokenManager(transport, store: store)
            let events = manager.events()
            await #expect(throws: NetworkError.self) { try await manager.refresh(failedToken: "a") }
            #expect(store.read() == nil)
            #expect(transport.requestCount == 0)
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next() == .sessionExpired(.noRefreshToken))
        }

        @Test func signedOutRefreshIsSessionExpired() async throws {
            let transport = FakeAuthServer().makeTransport()
            let manager = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore())
            #expect(try await manager.validAccessToken() == nil)
            await #expect(throws: NetworkError.self) { try await manager.refresh(failedToken: nil) }
            #expect(transport.requestCount == 0)
        }

        // MARK: Cancellation and lifecycle

        @Test func cancellingOneWaiterLeavesTheOthersAndTheRefresh() async throws {
            let gate = AsyncGate()
            let server = FakeAuthServer(refreshGate: gate)
            let transport = server.makeTransport()
            let initial = server.signIn()
            let manager = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore(initial))
            let tasks = (0..<3).map { _ in Task { try await manager.refresh(failedToken: initial.accessToken) } }
            await AuthFixture.eventually { await manager.pendingRefreshWaiters == 3 }
            tasks[0].cancel()
            // The cancelled waiter ends while the refresh is still held at the gate.
            await #expect(throws: CancellationError.self) { try await tasks[0].value }
            #expect(await manager.pendingRefreshWaiters == 2)
            await gate.open()
            let a = try await tasks[1].value
            let b = try await tasks[2].value
            #expect(a == b)
            #expect(a != initial.accessToken)
            #expect(server.refreshCalls == 1)
        }

        @Test func signOutDuringARefreshEndsWaitersSignedOutAndDropsTheResult() async throws {
            let gate = AsyncGate()
            let server = FakeAuthServer(refreshGate: gate)
            let transport = server.makeTransport()
            let initial = server.signIn()
            let store = InMemoryTokenStore(initial)
            let manager = FakeAuthServer.tokenManager(transport, store: store)
            let events = manager.events()
            let waiter = Task { try await manager.refresh(failedToken: initial.accessToken) }
            await AuthFixture.eventually { await manager.pendingRefreshWaiters == 1 }
            try await manager.signOut()
            let result = await waiter.result
            guard case .failure(NetworkError.signedOut) = result else {
                Issue.record("expected signedOut, got \(result)")
                return
            }
            await gate.open()
            #expect(store.read() == nil)
            #expect(try await manager.validAccessToken() == nil)
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next() == .signedOut)
        }

        @Test func signInDuringARefreshAnswersWaitersWithTheNewToken() async throws {
            let gate = AsyncGate()
            let server = FakeAuthServer(refreshGate: gate)
            let transport = server.makeTransport()
            let initial = server.signIn()
            let store = InMemoryTokenStore(initial)
            let manager = FakeAuthServer.tokenManager(transport, store: store)
            let waiter = Task { try await manager.refresh(failedToken: initial.accessToken) }
            await AuthFixture.eventually { await manager.pendingRefreshWaiters == 1 }
            let other = server.signIn()
            try await manager.signIn(other)
            #expect(try await waiter.value == other.accessToken)
            await gate.open()
            let stored = try #require(store.read())
            #expect(stored.accessToken == other.accessToken && stored.refreshToken == other.refreshToken)
        }

        @Test func storeWriteFailureKeepsTheSessionInMemoryAndIsReported() async throws {
            struct FailingWrites: TokenStore {
                let initial: AuthTokens
                func read() throws -> AuthTokens? { initial }
                func write(_ tokens: AuthTokens) throws {
                    throw TokenStoreError.fileSystem(operation: "rename", path: "/x", errno: 28)
                }
                func clear() throws {}
            }
            let server = FakeAuthServer()
            let transport = server.makeTransport()
            let initial = server.signIn()
            let manager = FakeAuthServer.tokenManager(transport, store: FailingWrites(initial: initial))
            let events = manager.events()
            let fresh = try await manager.refresh(failedToken: initial.accessToken)
            #expect(fresh != initial.accessToken)
            #expect(try await manager.validAccessToken() == fresh)
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next() == .refreshed)
            #expect(await iterator.next() == .storeFailed(.fileSystem(operation: "rename", path: "/x", errno: 28)))
        }

        /// A rotated refresh token whose store write failed once (a Keychain briefly unavailable)
        /// is written by the next call, so a relaunch finds it instead of the spent one.
        @Test func aRotatedRefreshTokenWhoseWriteFailedIsWrittenByTheNextCall() async throws {
            final class FlakyStore: TokenStore {
                let inner: InMemoryTokenStore
                let failuresLeft = Locked(2)
                let writes = Locked(0)
                init(_ tokens: AuthTokens) { inner = InMemoryTokenStore(tokens) }
                func read() throws -> AuthTokens? { inner.read() }
                func write(_ tokens: AuthTokens) throws {
                    writes.withLock { $0 += 1 }
                    let fail = failuresLeft.withLock { left -> Bool in
                        defer { left = max(0, left - 1) }
                        return left > 0
                    }
                    if fail { throw TokenStoreError.keychain(operation: "update", status: -25308) }
                    inner.write(tokens)
                }
                func clear() throws { inner.clear() }
            }
            let server = FakeAuthServer()
            let transport = server.makeTransport()
            let initial = server.signIn()
            let store = FlakyStore(initial)
            let manager = FakeAuthServer.tokenManager(transport, store: store)
            let events = Locked<[SessionEvent]>([])
            let stream = manager.events()
            let collector = Task { for await event in stream { events.withLock { $0.append(event) } } }
            defer { collector.cancel() }
            let fresh = try await manager.refresh(failedToken: initial.accessToken)  // the write fails
            #expect(try await manager.validAccessToken() == fresh)  // tried again: fails again
            #expect(store.writes.current == 2)
            #expect(try await manager.validAccessToken() == fresh)  // tried again: written
            #expect(store.inner.read()?.refreshToken == "refresh-2")
            for _ in 0..<3 { _ = try await manager.validAccessToken() }
            #expect(store.writes.current == 3)  // nothing more to write
            let failed = SessionEvent.storeFailed(.keychain(operation: "update", status: -25308))
            await AuthFixture.eventually { events.current.count >= 3 }
            #expect(events.current == [.refreshed, failed, failed])  // every failed write is published

            // Relaunched, a new manager reads the rotated pair and is still signed in.
            let relaunched = FakeAuthServer.tokenManager(transport, store: store)
            #expect(try await relaunched.refresh(failedToken: fresh) != fresh)
        }

        @Test func tokensAreCachedUntilReloadedFromTheStore() async throws {
            let server = FakeAuthServer()
            let first = server.signIn()
            let store = InMemoryTokenStore(first)
            let manager = FakeAuthServer.tokenManager(server.makeTransport(), store: store)
            #expect(try await manager.validAccessToken() == first.accessToken)
            let second = server.signIn()
            store.write(second)  // another process (an app extension) signed in again
            #expect(try await manager.validAccessToken() == first.accessToken)
            await manager.reloadFromStore()
            #expect(try await manager.validAccessToken() == second.accessToken)
        }

        /// Alice's refresh is out when another process signs Bob in and this one reloads: the
        /// refresh neither overwrites Bob's sign-in in the store nor hands Alice's token out.
        @Test func aRefreshThatEndsAfterAReloadFoundAnotherSignInIsDropped() async throws {
            let gate = AsyncGate()
            let server = FakeAuthServer(refreshGate: gate)
            let alice = server.signIn()
            let store = InMemoryTokenStore(alice)
            let manager = FakeAuthServer.tokenManager(server.makeTransport(), store: store)
            let refresh = Task { try await manager.refresh(failedToken: alice.accessToken) }
            await AuthFixture.eventually { await manager.pendingRefreshWaiters == 1 }
            let bob = AuthTokens(accessToken: "bob-access", refreshToken: "bob-refresh")
            store.write(bob)  // the other process signs Bob in
            await manager.reloadFromStore()
            await gate.open()
            #expect(try await refresh.value == "bob-access")  // the new session's token, as after signIn
            #expect(store.read() == bob)
            #expect(try await manager.validAccessToken() == "bob-access")
        }

        /// A refresh by another process (same refresh token, new access token) is adopted on
        /// reload without ending anything in flight.
        @Test func aReloadAdoptsAnotherProcesssRefreshOfTheSameSignIn() async throws {
            let store = InMemoryTokenStore(AuthTokens(accessToken: "a1", refreshToken: "r1"))
            let manager = FakeAuthServer.tokenManager(FakeAuthServer().makeTransport(), store: store)
            let session = try #require(try await manager.accessTokenAndSession())
            store.write(AuthTokens(accessToken: "a2", refreshToken: "r1"))
            await manager.reloadFromStore()
            let reloaded = try #require(try await manager.accessTokenAndSession())
            #expect(reloaded.token == "a2")
            #expect(reloaded.session == session.session)
        }

        @Test func eventStreamsEndWhenTheManagerIsReleased() async throws {
            var manager: TokenManager? = FakeAuthServer.tokenManager(
                FakeAuthServer().makeTransport(), store: InMemoryTokenStore())
            let events = try #require(manager).events()
            manager = nil
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next() == nil)
        }
    }
}
