import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// A plain client's `switchEnvironment(to:)` signs out before it points at another origin, so a
/// token obtained on one server never reaches another; the integration test
/// `PlainClientSwitchIntegrationTests` proves it against two servers.
@Suite("Session reset on a plain client's environment switch")
struct EnvironmentSwitchSignOutTests {
    struct Failing: Error {}

    /// A third-party sign-out participant whose store cannot be cleared.
    struct FailingSignOut: Interceptor, SessionResettable {
        func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
            try await next(request)
        }
        func resetSession() async throws { throw Failing() }
        var sessionResetStage: SessionResetStage { .signOut }
    }

    static func environment(_ name: String, _ url: String, headers: HTTPHeaders = HTTPHeaders()) throws -> APIEnvironment {
        try APIEnvironment(name: name, baseURL: url, headers: headers)
    }

    /// A client of `https://staging.example.test/v1` signed in with the token `STAGING`.
    static func signedInClient(
        stub: StubTransport, extra: [any Interceptor] = []
    ) async throws -> (APIClient, TokenManager, InMemoryTokenStore) {
        let store = InMemoryTokenStore()
        let grant = RefreshTokenGrant.oauth2(tokenURL: try #require(URL(string: "https://staging.example.test/auth/refresh")))
        let tokens = TokenManager(store: store, transport: StubTransport(responses: [HTTPResponse]()), grant: grant)
        try await tokens.signIn(AuthTokens(accessToken: "STAGING", refreshToken: "R"))
        let client = APIClient(environment: try environment("staging", "https://staging.example.test/v1")) {
            $0.transport = stub
            $0.interceptors = extra + [any Interceptor].standard(tokenManager: tokens)
        }
        return (client, tokens, store)
    }

    @Test(
        "a switch to another origin signs out first: the next authorized call fails signed out, nothing sent",
        arguments: [
            "https://production.example.test/v1",  // another host
            "https://staging.example.test:8443/v1",  // another port
            "http://staging.example.test/v1",  // another scheme
        ])
    func switchToAnotherOriginSignsOut(url: String) async throws {
        let stub = StubTransport { _ in .json("{}") }
        let (client, tokens, store) = try await Self.signedInClient(stub: stub)
        _ = try await client.send(Request<Data>.get("/me", policy: .authorizedRead))
        #expect(stub.requests.last?.value(forHTTPHeaderField: "Authorization") == "Bearer STAGING")

        let production = try Self.environment("production", url)
        try await client.switchEnvironment(to: production)
        #expect(client.environment == production)
        #expect(try await tokens.isSignedIn() == false)
        #expect(store.read() == nil)

        let refused = await #expect(throws: NetworkError.self) {
            try await client.send(Request<Data>.get("/me", policy: .authorizedRead))
        }
        #expect(refused?.kind == .signedOut)
        _ = try await client.send(Request<Data>.get("/echo"))  // an unauthenticated call still goes out, bare
        #expect(stub.requests.count == 2)
        #expect(stub.requests.last?.url?.absoluteString == url + "/echo")
        #expect(stub.requests.last?.value(forHTTPHeaderField: "Authorization") == nil)
    }

    @Test("a switch whose base URLs all stay on the old origins keeps the session")
    func sameOriginSwitchKeepsTheSession() async throws {
        let stub = StubTransport { _ in .json("{}") }
        let (client, tokens, _) = try await Self.signedInClient(stub: stub)
        let other = try Self.environment("staging-eu", "https://STAGING.example.test:443/v2", headers: ["X-Region": "eu"])
        try await client.switchEnvironment(to: other)
        #expect(try await tokens.isSignedIn())
        _ = try await client.send(Request<Data>.get("/me", policy: .authorizedRead))
        let sent = try #require(stub.requests.last)
        #expect(sent.url?.path == "/v2/me")
        #expect(sent.value(forHTTPHeaderField: "Authorization") == "Bearer STAGING")
        #expect(sent.value(forHTTPHeaderField: "X-Region") == "eu")
    }

    @Test("an environment with a second base URL on another origin counts as another origin")
    func anyForeignBaseURLSignsOut() async throws {
        let stub = StubTransport { _ in .json("{}") }
        let (client, tokens, _) = try await Self.signedInClient(stub: stub)
        let media = try APIEnvironment(
            "staging-media",
            baseURLs: [
                APIEnvironment.defaultAPI: try #require(URL(string: "https://staging.example.test/v1")),
                "media": try #require(URL(string: "https://media.example.test")),
            ])
        try await client.switchEnvironment(to: media)
        #expect(try await tokens.isSignedIn() == false)
    }

    @Test("when signing out fails, the switch throws SessionResetError and the environment stays")
    func failedSignOutKeepsTheEnvironment() async throws {
        let stub = StubTransport { _ in .json("{}") }
        let (client, tokens, _) = try await Self.signedInClient(stub: stub, extra: [FailingSignOut()])
        let staging = client.environment
        await #expect(throws: SessionResetError.self) {
            try await client.switchEnvironment(to: try Self.environment("production", "https://production.example.test"))
        }
        #expect(client.environment == staging)
        #expect(try await tokens.isSignedIn() == false, "the participants that could sign out did")
    }
}
