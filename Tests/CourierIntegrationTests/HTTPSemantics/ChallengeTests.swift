import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// Issue 9, items 3 and 4: a 401 with any challenge comes back at once; challenges decide refresh.
@Suite("HTTP semantics: authentication challenges")
struct ChallengeTests {
    static func challenge(_ fields: [String], status: Int = 401) -> Request<HTTPResponse> {
        var query: [URLQueryItem] = fields.map { URLQueryItem(name: "www", value: $0) }
        query.append(URLQueryItem(name: "status", value: String(status)))
        return Request<HTTPResponse>(method: .get, path: "/challenge", query: Query(query)) { response, _ in response }
    }

    @Test(
        "a 401 with a Basic (or Digest) challenge comes back at once as a response",
        arguments: [#"Basic realm="files""#, #"Digest realm="files", nonce="abc", qop="auth""#])
    func nonBearerChallengeReturnsAtOnce(_ field: String) async throws {
        let (client, _) = try TestServers.apiClient()
        let started = ContinuousClock.now
        do {
            _ = try await client.send(Self.challenge([field]).policy(.standard.with(\.deadline, .seconds(60))))
            Issue.record("expected 401")
        } catch let error as NetworkError {
            #expect(error.kind == .unauthorized, "\(error)")
            #expect(error.failedResponse?.challenges.first?.scheme == String(field.prefix { $0 != " " }))
            #expect(error.failedResponse?.challenges.first?["realm"] == "files")
        }
        // A client that waited for credentials would run into the 60 s deadline; 20 s leaves room
        // for a loaded CI machine running the suite in parallel.
        #expect(ContinuousClock.now - started < .seconds(20))
    }

    /// A signed-in client whose refreshes the server counts.
    static func signedIn() async throws -> (APIClient, TokenManager, String) {
        let namespace = TestServers.makeNamespace("challenge")
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        let (client, manager) = try await AuthSession.signedInClient(environment)
        return (client, manager, namespace)
    }

    @Test(
        "only a Bearer challenge with invalid_token or no error code refreshes (RFC 6750 §3.1)",
        arguments: [
            ([#"Bearer error="invalid_token", error_description="expired""#], 401, 1),
            (["Bearer"], 401, 1),
            ([#"Basic realm="x", Bearer realm="api""#], 401, 1),
            ([#"Bearer realm="api", error="invalid_request""#], 401, 0),
            ([#"Basic realm="files""#], 401, 0),
            ([#"Bearer error="insufficient_scope", scope="files:write""#], 403, 0),
        ])
    func challengeDecidesRefresh(_ fields: [String], _ status: Int, _ refreshes: Int) async throws {
        let (client, _, namespace) = try await Self.signedIn()
        do {
            _ = try await client.send(Self.challenge(fields, status: status).policy(.authorizedRead))
            Issue.record("expected \(status)")
        } catch let error as NetworkError {
            #expect(error.statusCode == status)
            #expect(error.failedResponse?.challenges.isEmpty == false)
        }
        let stats = ServerStats(try await TestServers.stats(namespace: namespace))
        #expect(stats.refreshCalls == refreshes)
        #expect(stats.int("rawRequests", "GET /challenge") == 1 + refreshes)
    }

    @Test("several challenges across fields, any case, escapes: the scope a 403 asks for is on the error")
    func challengesAreOnTheError() async throws {
        let (client, _) = try TestServers.apiClient()
        let fields = [
            #"Newauth realm="apps", type=1, title="Login to \"apps\"""#,
            #"bEaReR REALM="api", Error="insufficient_scope", scope="files:read files:write""#,
        ]
        do {
            _ = try await client.send(Self.challenge(fields, status: 403))
            Issue.record("expected 403")
        } catch let error as NetworkError {
            let challenges = error.failedResponse?.challenges ?? []
            #expect(challenges.map(\.scheme) == ["Newauth", "bEaReR"])
            #expect(challenges.first?["title"] == #"Login to "apps""#)
            #expect(challenges.last?.isScheme("Bearer") == true)
            #expect(challenges.last?["error"] == "insufficient_scope")
            #expect(challenges.last?["scope"] == "files:read files:write")
        }
    }
}

/// Issue 9, item 5: a skewed device clock never causes more than one refresh per real expiry.
@Suite("HTTP semantics: clock skew and token expiry")
struct ClockSkewTests {
    @Test(
        "with the server's clock an hour off either way, 10 calls make no refresh; a 401 refreshes once",
        arguments: [(-3600.0, false), (-3600.0, true), (3600.0, false), (3600.0, true)])
    func skewedClockRefreshesOncePerExpiry(_ skew: Double, _ omitExpiresIn: Bool) async throws {
        let namespace = TestServers.makeNamespace("skew")
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        let (status, _) = try await TestServers.control(
            "POST", "auth/config", namespace: namespace,
            json: ["clockSkew": skew, "omitExpiresIn": omitExpiresIn, "accessTtl": 300])
        #expect(status == 200)
        let transport = TestTransport.make()
        let manager = TokenManager(
            store: InMemoryTokenStore(), transport: transport,
            grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("auth/refresh")))
        let client = APIClient(environment: environment) {
            $0.transport = transport
            $0.interceptors = .standard(tokenManager: manager, retry: RetryInterceptor(clock: TestClock()))
        }
        let login = try await client.response(
            for: Request<OAuthTokenResponse>.post("/auth/login", body: AuthSession.Login(accessTtl: 300)))
        try await manager.signIn(login.value.tokens(serverDate: login.response.date))

        for _ in 0..<10 { _ = try await client.send(AuthSession.me) }
        var stats = ServerStats(try await TestServers.stats(namespace: namespace))
        #expect(stats.refreshCalls == 0)
        #expect(stats.authorized == 10)

        // The server revokes the token: the next call is answered 401 and refreshes exactly once.
        _ = try await TestServers.control("POST", "auth/revoke", namespace: namespace, json: [:])
        for _ in 0..<3 { _ = try await client.send(AuthSession.me) }
        stats = ServerStats(try await TestServers.stats(namespace: namespace))
        #expect(stats.refreshCalls == 1)
    }
}
