import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierSignIn
import CourierTesting

/// A token endpoint that answers a refresh with a compression bomb (`GET /hostile/bomb`,
/// TestServer/routes_hostile.py): the refresh goes straight to the transport, outside the
/// pipeline whose step binds the client's body limit.
@Suite("A token endpoint's oversized answer")
struct RefreshResponseLimitTests {
    private static func hostile(_ namespace: String) async throws -> [String: Any] {
        try await TestServers.stats(namespace: namespace)["hostile"] as? [String: Any] ?? [:]
    }

    /// `/hostile/bomb` with 256 MiB of zeros in gzip (about 256 KiB on the wire).
    private static func bombURL(_ environment: APIEnvironment) throws -> URL {
        var bomb = URLComponents(url: environment.baseURL.appendingPathComponent("hostile/bomb"), resolvingAgainstBaseURL: false)
        bomb?.queryItems = [URLQueryItem(name: "coding", value: "gzip"), URLQueryItem(name: "mib", value: "256")]
        return try #require(bomb?.url)
    }

    @Test("a refresh answered with a gzip bomb stops at the token response limit with responseTooLarge")
    func refreshAnsweredWithABombStopsAtTheLimit() async throws {
        let namespace = TestServers.makeNamespace("auth")
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        let transport = TestTransport.make()
        let bombURL = try Self.bombURL(environment)
        let grant = RefreshTokenGrant(
            makeRequest: { _ in URLRequest(url: bombURL) },
            parseResponse: { response, current in
                try RefreshTokenGrant.parseOAuth2Response(response, current: current, receivedAt: Date())
            })
        let store = InMemoryTokenStore(
            AuthTokens(accessToken: "expired", refreshToken: "refresh-1", expiresAt: Date(timeIntervalSince1970: 0)))
        let manager = TokenManager(store: store, grant: grant)
        let client = APIClient(environment: environment) {
            $0.transport = transport
            $0.interceptors = [RetryInterceptor(clock: TestClock()), AuthInterceptor(tokenManager: manager)]
        }
        let error = await #expect(throws: NetworkError.self) {
            _ = try await client.send(Request<Data>.get("/items", policy: .authorizedRead))
        }
        #expect(error == .responseTooLarge(limit: RefreshTokenGrant.maximumResponseSize))
        // Sent once (a failed refresh is not repeated by the call). Measured before: the refresh
        // held all 256 MiB (peak RSS 606 MiB; 85 MiB with the limit) and failed decoding them.
        #expect(try await Self.hostile(namespace)["opened"] as? Int == 1)
    }

    @Test("a sign-in's code exchange answered with a gzip bomb stops at the token response limit")
    func codeExchangeAnsweredWithABombStopsAtTheLimit() async throws {
        let namespace = TestServers.makeNamespace("pkce")
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        let transport = TestTransport.make()
        let store = InMemoryTokenStore()
        let manager = TokenManager(
            store: store, transport: transport,
            grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("auth/refresh")))
        let configuration = AuthorizationCodeConfiguration(
            authorizationEndpoint: environment.baseURL.appendingPathComponent("oauth/authorize"),
            tokenEndpoint: try Self.bombURL(environment), clientID: "courier-tests",
            redirectURI: try #require(URL(string: "com.example.courier:/oauth2redirect")))
        let flow = AuthorizationCodeFlow(configuration: configuration, tokenManager: manager, transport: transport)
        let authorization = try await flow.authorizationURL()
        let state = try #require(
            URLComponents(url: authorization, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "state" }?.value)
        let callback = try #require(URL(string: "com.example.courier:/oauth2redirect?code=c1&state=\(state)"))
        let error = await #expect(throws: NetworkError.self) { try await flow.handleCallback(callback) }
        #expect(error == .responseTooLarge(limit: RefreshTokenGrant.maximumResponseSize))
        #expect(store.read() == nil)
        #expect(try await Self.hostile(namespace)["opened"] as? Int == 1)
    }
}
