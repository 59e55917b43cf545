import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// A call of one account waits for a single-flight token refresh; the app switches to another
/// account meanwhile (a session reset, a sign-in). The call must never go out with the next
/// account's token, nor get the next account's answer: the server records the token of every
/// request it gets.
@Suite("An account switch while a call waits for a token refresh")
struct AccountSwitchDuringRefreshTests {
    /// Answers every API request with the statement of the token it carried; 401 to `refused`.
    static func server(refusing refused: String? = nil) -> StubTransport {
        StubTransport { request in
            let token = request.value(forHTTPHeaderField: "Authorization") ?? "nobody"
            if token == refused.map({ "Bearer \($0)" }) {
                return HTTPResponse(statusCode: 401, headers: ["WWW-Authenticate": "Bearer"], url: request.url)
            }
            return HTTPResponse(
                statusCode: 200, headers: ["Content-Type": "text/plain"], body: Data("statement of \(token)".utf8),
                url: request.url)
        }
    }

    /// A token endpoint that answers Alice's refresh once `gate` opens.
    static func tokenEndpoint(_ gate: Gate) -> StubTransport {
        StubTransport { request in
            await gate.wait()
            return HTTPResponse(
                statusCode: 200, headers: ["Content-Type": "application/json"],
                body: Data(#"{"access_token":"alice-2","refresh_token":"r-alice-2","expires_in":3600}"#.utf8),
                url: request.url)
        }
    }

    static func statement(_ client: APIClient) async throws -> String {
        String(decoding: try await client.send(Request<Data>.get("/statement", policy: .authorizedRead)), as: UTF8.self)
    }

    /// Waits (bounded, 30 s: a safety bound for a loaded parallel pass) until `transport` got a request.
    static func waitForRequest(_ transport: StubTransport) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        while transport.requestCount == 0, clock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
        try #require(transport.requestCount == 1)
    }

    enum Switch: String, CaseIterable, CustomTestStringConvertible {
        /// `tokens.signIn` of Bob.
        case signIn
        /// `client.resetSession()`, then Bob's sign-in.
        case resetThenSignIn
        var testDescription: String { rawValue }
    }

    /// Measured before the fix: Alice's call went out with Bob's token and returned "statement of
    /// Bearer bob" to her caller.
    @Test(
        "a call waiting for its account's refresh is not sent with the next account's token",
        arguments: Switch.allCases)
    func waitingCallIsNotSentAsTheNextAccount(_ switching: Switch) async throws {
        let gate = Gate()
        let refreshes = Self.tokenEndpoint(gate)
        let tokens = TokenManager(
            store: InMemoryTokenStore(), transport: refreshes,
            grant: .oauth2(tokenURL: URL(string: "https://auth.example.test/token")!))
        let server = Self.server()
        let client = StandardClientFixture.client(server, tokenManager: tokens)
        // Alice's access token has expired: her call waits in the auth step for the refresh.
        try await tokens.signIn(
            AuthTokens(accessToken: "alice", refreshToken: "r-alice", expiresAt: Date(timeIntervalSinceNow: -60)))
        let alicesCall = Task { try await Self.statement(client) }
        try await Self.waitForRequest(refreshes)
        if switching == .resetThenSignIn { try await client.resetSession() }
        try await tokens.signIn(AuthTokens(accessToken: "bob", refreshToken: "r-bob"))
        await gate.open()
        let result = await alicesCall.result
        switch result {
        case .success(let statement):
            Issue.record("Alice's call returned \(statement)")
        case .failure(let error):
            #expect((error as? NetworkError)?.kind == .signedOut, "\(error)")
        }
        // Nothing went out for her call; Bob's own call carries his token.
        #expect(server.requests.isEmpty, "\(server.requests.map { $0.value(forHTTPHeaderField: "Authorization") })")
        #expect(try await Self.statement(client) == "statement of Bearer bob")
        #expect(server.requests.map { $0.value(forHTTPHeaderField: "Authorization") } == ["Bearer bob"])
    }

    /// The retry after a 401: Alice's call was answered 401, waits for the refresh, and Bob signs
    /// in meanwhile. Her call is not sent again (with his token): the 401 is her answer.
    @Test("a call refreshing after a 401 is not sent again with the next account's token")
    func retryAfterUnauthorizedIsNotSentAsTheNextAccount() async throws {
        let gate = Gate()
        let refreshes = Self.tokenEndpoint(gate)
        let tokens = TokenManager(
            store: InMemoryTokenStore(), transport: refreshes,
            grant: .oauth2(tokenURL: URL(string: "https://auth.example.test/token")!))
        let server = Self.server(refusing: "alice")
        let client = StandardClientFixture.client(server, tokenManager: tokens)
        try await tokens.signIn(AuthTokens(accessToken: "alice", refreshToken: "r-alice"))
        let alicesCall = Task { try await Self.statement(client) }
        try await Self.waitForRequest(refreshes)
        try await tokens.signIn(AuthTokens(accessToken: "bob", refreshToken: "r-bob"))
        await gate.open()
        let result = await alicesCall.result
        if case .success(let statement) = result { Issue.record("Alice's call returned \(statement)") }
        #expect(server.requests.map { $0.value(forHTTPHeaderField: "Authorization") } == ["Bearer alice"])
    }
}
