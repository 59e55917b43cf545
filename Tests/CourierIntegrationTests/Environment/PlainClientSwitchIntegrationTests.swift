import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// A plain client (`APIClient(environment:)`, no `EnvironmentSet`) switched by a debug menu from
/// staging (`COURIER_API_URL`) to production (`COURIER_API2_URL`, another port: another origin).
/// The switch signs out first, so staging's token never reaches production: an authorized call
/// after the switch fails with `NetworkError.signedOut` and sends nothing (the usual outcome when
/// nobody is signed in), which production's request log proves.
@Suite("A plain client's environment switch against two reference servers")
struct PlainClientSwitchIntegrationTests {
    struct Me: Decodable, Sendable {
        var username: String
    }

    /// A plain client of staging with the standard pipeline, signed in as alice.
    static func signedIn(
        _ servers: TwoServers
    ) async throws -> (client: APIClient, tokens: TokenManager, accessToken: String, staging: APIEnvironment) {
        let staging = APIEnvironment(name: "staging", baseURL: TwoServers.base(servers.staging, servers.namespace))
        let tokens = TokenManager(
            store: InMemoryTokenStore(), transport: TestTransport.make(),
            grant: .oauth2(tokenURL: staging.baseURL.appendingPathComponent("auth/refresh")))
        let client = APIClient(environment: staging) {
            TestTransport.configure(&$0)
            $0.interceptors = .standard(tokenManager: tokens)
        }
        let login = try await client.response(
            for: Request<OAuthTokenResponse>.post("/auth/login", body: AuthSession.Login(accessTtl: 3600), policy: .authRefresh))
        try await tokens.signIn(login.value.tokens(serverDate: login.response.date))
        return (client, tokens, login.value.accessToken, staging)
    }

    @Test("a switch to another server signs out: staging's token never reaches production")
    func switchToAnotherServerSignsOut() async throws {
        let servers = try TwoServers()
        let (client, tokens, accessToken, _) = try await Self.signedIn(servers)
        let me = try await client.send(Request<Me>.get("/me", policy: .authorizedRead))
        #expect(me.username == "alice")

        // A call already running when the switch happens keeps its URL and its token.
        let gate = "switch-\(UUID().uuidString.prefix(8))"
        let running = Task {
            try await client.send(Request<Me>.get("/protected/held/\(gate)", policy: .authorizedRead))
        }
        try await TestServers.waitUntilHeld(1, gate: gate, namespace: servers.namespace)

        try await client.switchEnvironment(
            to: APIEnvironment(name: "production", baseURL: TwoServers.base(servers.production, servers.namespace)))
        #expect(try await tokens.isSignedIn() == false)

        // Nobody is signed in any more: the authorized call fails locally, nothing is sent.
        let refused = await #expect(throws: NetworkError.self) {
            try await client.send(Request<Data>.get("/echo", policy: .authorizedRead))
        }
        #expect(refused?.kind == .signedOut)
        // Production is reachable; an anonymous call goes there without a token.
        let echo = try await client.send(Request<Echo>.get("/echo"))
        #expect(echo.header("Host") == "127.0.0.1:\(servers.production.port ?? 0)")

        let (status, _) = try await TestServers.control("POST", "_gates/\(gate)/open", namespace: servers.namespace)
        #expect(status == 200)
        #expect(try await running.value.username == "alice", "the running call finished on staging with its token")

        let productionLog = try await servers.log(servers.production)
        #expect(productionLog.map(\.path) == ["/echo"], "only the anonymous call reached production")
        for entry in productionLog {
            #expect(entry.header("Authorization") == nil)
            for value in entry.headers.values { #expect(!value.contains(accessToken)) }
        }
        let held = try await servers.log(servers.staging).filter { $0.path.hasPrefix("/protected/held/") }
        #expect(held.map { $0.header("Authorization") } == ["Bearer \(accessToken)"])
    }

    @Test("a switch to the same origin (other headers) keeps the session")
    func sameOriginSwitchKeepsTheSession() async throws {
        let servers = try TwoServers()
        let (client, tokens, accessToken, staging) = try await Self.signedIn(servers)
        try await client.switchEnvironment(
            to: APIEnvironment(name: "staging-eu", baseURL: staging.baseURL, headers: ["X-Region": "eu"]))
        #expect(try await tokens.isSignedIn())
        let me = try await client.send(Request<Me>.get("/me", policy: .authorizedRead))
        #expect(me.username == "alice")

        let calls = try await servers.log(servers.staging).filter { $0.path == "/me" }
        #expect(calls.count == 1)
        #expect(calls.last?.header("Authorization") == "Bearer \(accessToken)")
        #expect(calls.last?.header("X-Region") == "eu")
        #expect(try await servers.log(servers.production).isEmpty)
    }

    /// The token manager's grant names staging's token endpoint. After the switch to production
    /// and a sign-in there, the first refresh used to send production's refresh token to staging
    /// (staging's log: `POST /auth/refresh`). It is refused: nothing goes to staging, and the call
    /// that needed it fails with `NetworkError.invalidRequest` saying why.
    @Test("after a switch to another server, a refresh never sends that server's refresh token to the old one")
    func aRefreshAfterASwitchNeverGoesToTheOldServersTokenEndpoint() async throws {
        let servers = try TwoServers()
        let (client, tokens, _, _) = try await Self.signedIn(servers)
        try await client.switchEnvironment(
            to: APIEnvironment(name: "production", baseURL: TwoServers.base(servers.production, servers.namespace)))
        let login = try await client.send(
            Request<OAuthTokenResponse>.post("/auth/login", body: AuthSession.Login(accessTtl: 3600), policy: .authRefresh))
        // Signed in on production with an access token that has expired: the next call refreshes.
        try await tokens.signIn(
            AuthTokens(
                accessToken: login.accessToken, refreshToken: login.refreshToken, expiresAt: Date(timeIntervalSinceNow: -60)))
        let before = try await servers.log(servers.staging).count

        let refused = await #expect(throws: NetworkError.self) {
            try await client.send(Request<Me>.get("/me", policy: .authorizedRead))
        }
        #expect(refused?.kind == .invalidRequest, "\(String(describing: refused))")
        let sent = try await servers.log(servers.staging).dropFirst(before).map { "\($0.method) \($0.path)" }
        #expect(sent.isEmpty, "production's refresh token went to staging: \(sent)")
        #expect(try await servers.log(servers.production).filter { $0.path == "/me" }.isEmpty)
    }
}
