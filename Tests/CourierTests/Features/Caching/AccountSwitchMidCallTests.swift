import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// A cache partitioned per account (the app's own partition closure): the partition of a call is
/// read when the call reaches the cache, its token later, in the auth step. An account switch in
/// between must not store one account's response in the other's partition.
@Suite("An account switch between the cache and the auth step")
struct AccountSwitchMidCallTests {
    /// A client whose cache partition follows `user` ("alice"), and a token manager whose refresh
    /// (answering alice-2) waits at `refreshGate`.
    static func aliceWithAnExpiredToken() -> (
        refreshGate: Gate, refreshes: StubTransport, tokens: TokenManager, server: StubTransport, user: Locked<String>,
        client: APIClient
    ) {
        let refreshGate = Gate()
        let refreshes = StubTransport { request in
            await refreshGate.wait()
            return HTTPResponse(
                statusCode: 200, headers: ["Content-Type": "application/json"],
                body: Data(#"{"access_token":"alice-2","refresh_token":"r-alice-2","expires_in":3600}"#.utf8), url: request.url)
        }
        let tokens = TokenManager(
            store: InMemoryTokenStore(), transport: refreshes,
            grant: .oauth2(tokenURL: URL(string: "https://auth.example.test/token")!))
        let server = SessionEndCacheTests.statementServer()
        let user = Locked("alice")
        let cache = HTTPCache(partition: { user.withLock { $0 } })
        let client = StandardClientFixture.client(server, tokenManager: tokens, cache: cache)
        return (refreshGate, refreshes, tokens, server, user, client)
    }

    /// Waits until Alice's call's refresh reached the token endpoint (past the cache), at most
    /// 30 s (a safety bound: in the whole parallel pass her task may wait seconds for a thread).
    static func waitForTheRefresh(_ refreshes: StubTransport) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while refreshes.requestCount == 0, clock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        try #require(refreshes.requestCount == 1)
    }

    @Test func aResponseFetchedWithTheNextAccountsTokenIsNotStoredForThePreviousAccount() async throws {
        let (refreshGate, refreshes, tokens, server, user, client) = Self.aliceWithAnExpiredToken()
        // Alice's access token has expired: her call waits in the auth step for the refresh.
        try await tokens.signIn(
            AuthTokens(accessToken: "alice", refreshToken: "r-alice", expiresAt: Date(timeIntervalSinceNow: -60)))
        let alicesCall = Task { try? await SessionEndCacheTests.statement(client) }
        try await Self.waitForTheRefresh(refreshes)
        // The app switches to Bob meanwhile (its partition closure follows the signed-in user).
        user.withLock { $0 = "bob" }
        try await tokens.signIn(AuthTokens(accessToken: "bob", refreshToken: "r-bob"))
        await refreshGate.open()
        let answer = await alicesCall.value
        // Alice signs in again: whatever her partition holds must be hers.
        user.withLock { $0 = "alice" }
        try await tokens.signIn(AuthTokens(accessToken: "alice-3", refreshToken: "r-alice-3"))
        let statement = try await SessionEndCacheTests.statement(client)
        #expect(!statement.contains("bob"), "Alice was served \(statement) (her first call got \(answer ?? "an error"))")
        // Her first call was never sent (her sign-in ended while it waited for the refresh: see
        // AccountSwitchDuringRefreshTests); her second went to the server.
        #expect(answer == nil)
        #expect(server.requestCount == 1)
        #expect(server.requests.map { $0.value(forHTTPHeaderField: "Authorization") } == ["Bearer alice-3"])
    }

    /// The partition check itself (the call above now ends in the auth step before it is sent):
    /// the app's partition moves to Bob while Alice's call waits for her refresh, with no sign-in
    /// in between, so the call goes out with her token. Its response is not stored: the call's
    /// partition is no longer the current one. Without the check it was stored in the partition
    /// read when the call reached the cache, and the next call of that partition was a hit
    /// (server count 1).
    @Test func aResponseIsNotStoredWhenThePartitionChangedDuringTheCall() async throws {
        let (refreshGate, refreshes, tokens, server, user, client) = Self.aliceWithAnExpiredToken()
        try await tokens.signIn(
            AuthTokens(accessToken: "alice", refreshToken: "r-alice", expiresAt: Date(timeIntervalSinceNow: -60)))
        let alicesCall = Task { try await SessionEndCacheTests.statement(client) }
        try await Self.waitForTheRefresh(refreshes)
        user.withLock { $0 = "bob" }
        await refreshGate.open()
        #expect(try await alicesCall.value == "statement of Bearer alice-2")
        user.withLock { $0 = "alice" }
        #expect(try await SessionEndCacheTests.statement(client) == "statement of Bearer alice-2")
        // Not a hit: the first response was stored in no partition.
        #expect(server.requestCount == 2)
    }
}
