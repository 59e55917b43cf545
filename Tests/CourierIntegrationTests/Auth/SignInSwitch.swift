import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// The fixture of the one-sign-in-per-call suites: a client of the reference server whose token
/// manager starts signed in as alice, and a manual clock for the waits (backoffs) during which a
/// test signs alice out and bob in.
struct SignInSwitch {
    struct Login: Encodable, Sendable {
        var username: String
        var password = "secret"
    }

    let namespace: String
    let client: APIClient
    let tokens: TokenManager
    let clock: TestClock

    /// Signs in as alice. `retry` is the client's retry interceptor (the standard one over
    /// `clock` when `nil`); `clockDrivesClient` makes `clock` the client's own clock too (the
    /// backoffs of downloads and uploads).
    static func start(
        _ prefix: String, clockDrivesClient: Bool = true,
        retry: (@Sendable (TestClock) -> RetryInterceptor)? = nil
    ) async throws -> SignInSwitch {
        let namespace = TestServers.makeNamespace(prefix)
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        let tokens = TokenManager(
            store: InMemoryTokenStore(), transport: URLSessionTransport(),
            grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("auth/refresh")))
        let clock = TestClock(mode: .manual)
        let (client, _) = try TestServers.apiClient(namespace: namespace) {
            if let retry {
                $0.interceptors = .standard(tokenManager: tokens, retry: retry(clock))
            } else {
                $0.interceptors = .standard(tokenManager: tokens)
            }
            if clockDrivesClient { $0.clock = clock }
        }
        let fixture = SignInSwitch(namespace: namespace, client: client, tokens: tokens, clock: clock)
        try await fixture.signIn("alice")
        return fixture
    }

    /// Logs `username` in at the reference server and hands the tokens to the token manager.
    func signIn(_ username: String) async throws {
        let response = try await client.send(
            Request<OAuthTokenResponse>.post("/auth/login", body: Login(username: username), policy: .authRefresh))
        try await tokens.signIn(response.tokens())
    }

    /// Alice signs out and bob signs in, then `clock` moves on by `step` (the wait ends).
    func switchToBob(thenAdvanceBy step: Duration) async throws {
        try await tokens.signOut()
        try await signIn("bob")
        clock.advance(by: step)
    }
}
