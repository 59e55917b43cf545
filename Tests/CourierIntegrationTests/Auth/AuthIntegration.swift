import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// The auth integration tests against the reference server, grouped in extensions.
enum AuthIntegrationTests {}

/// A signed-in session against the reference server: a client whose pipeline is
/// RequestID → Retry → Auth → Idempotency over one `URLSessionTransport`, the token manager that
/// shares that transport, and the store it writes.
struct AuthSession {
    /// How the client's token manager judges expiry.
    enum Mode: String, Sendable, CaseIterable, CustomTestStringConvertible {
        /// Reads the JWT `exp` and refreshes before sending an expired token.
        case proactive
        /// Believes every token is valid (a device clock far behind): learns of expiry only
        /// from the server's 401.
        case reactive

        var testDescription: String { rawValue }
    }

    struct Login: Encodable, Sendable {
        var username = "alice"
        var password = "secret"
        var accessTtl: Double
    }

    /// `GET /me` and `GET /protected/held/{gate}`.
    struct Me: Decodable, Sendable {
        var username: String
        var jti: String
    }

    let client: APIClient
    let manager: TokenManager
    let store: InMemoryTokenStore
    let namespace: String
    /// The tokens the sign-in returned.
    let signedIn: AuthTokens

    /// Signs in as alice with an access token already expired for `expiredBy` seconds; later
    /// refreshes issue tokens valid for an hour. `refreshDelay` makes every refresh take that long
    /// on the server (so parallel callers pile up). `now`, when given, is the token manager's clock
    /// in proactive mode (a test moves it past the manager's hold after a failed refresh).
    static func start(
        mode: Mode, expiredBy: Double = 60, refreshDelay: Double = 0, now: (@Sendable () -> Date)? = nil
    ) async throws -> AuthSession {
        let namespace = TestServers.makeNamespace("auth")
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        // Room for every parallel call to be in flight at once (the reactive storms hold up to
        // 50 requests at the server); URLSession's default allows only a few per host.
        let transport = TestTransport.make(maximumConnectionsPerHost: 64)
        let store = InMemoryTokenStore()
        let clock: @Sendable () -> Date
        switch mode {
        case .proactive: clock = now ?? { Date() }
        case .reactive: clock = { Date.distantPast }
        }
        let manager = TokenManager(
            store: store, transport: transport,
            grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("auth/refresh")),
            leeway: .seconds(10), now: clock)
        let client = APIClient(environment: environment) {
            $0.transport = transport
            $0.interceptors = [
                RequestIDInterceptor(),
                RetryInterceptor(clock: TestClock()),
                AuthInterceptor(tokenManager: manager),
                IdempotencyInterceptor(),
            ]
        }
        let response = try await client.send(Request<OAuthTokenResponse>.post("/auth/login", body: Login(accessTtl: -expiredBy)))
        let tokens = response.tokens()
        try await manager.signIn(tokens)
        let (status, _) = try await TestServers.control(
            "POST", "auth/config", namespace: namespace, json: ["accessTtl": 3600, "refreshDelay": refreshDelay])
        #expect(status == 200)
        // What the store holds after the sign-in: the tokens with the grant ID the manager gave them.
        let signedIn = try #require(store.read())
        #expect(signedIn.accessToken == tokens.accessToken && signedIn.grantID != nil)
        return AuthSession(client: client, manager: manager, store: store, namespace: namespace, signedIn: signedIn)
    }

    /// `GET /me`, bearer token required.
    static let me = Request<Me>.get("/me").policy(.authorizedRead)

    /// A client for `environment` with the standard pipeline and a token manager over the same
    /// transport, signed in through the reference server's `POST /auth/login` (one-hour tokens).
    static func signedInClient(_ environment: APIEnvironment) async throws -> (APIClient, TokenManager) {
        let transport = TestTransport.make()
        let manager = TokenManager(
            store: InMemoryTokenStore(), transport: transport,
            grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("auth/refresh")))
        let client = APIClient(environment: environment) {
            $0.transport = transport
            $0.interceptors = .standard(tokenManager: manager, retry: RetryInterceptor(clock: TestClock()))
        }
        let login = try await client.response(
            for: Request<OAuthTokenResponse>.post("/auth/login", body: Login(accessTtl: 3600)))
        try await manager.signIn(login.value.tokens(serverDate: login.response.date))
        return (client, manager)
    }

    /// `GET /protected/held/{gate}`: held by the server until the gate opens, token checked after.
    static func held(_ gate: String) -> Request<Me> {
        Request<Me>.get("/protected/held/\(gate)").policy(.authorizedRead)
    }

    /// The `jti` claim of `token`.
    static func jti(_ token: String?) -> String? {
        token.flatMap { JSONWebToken.claims(of: $0)?.id }
    }

    /// Server counters.
    func stats() async throws -> ServerStats {
        ServerStats(try await TestServers.stats(namespace: namespace))
    }

    /// Waits until `count` requests are held at `gate` (``TestServers/waitUntilHeld(_:gate:namespace:sourceLocation:)``).
    func waitUntilHeld(_ count: Int, gate: String, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        try await TestServers.waitUntilHeld(count, gate: gate, namespace: namespace, sourceLocation: sourceLocation)
    }

    /// Opens `gate`: every held and later request passes.
    func open(_ gate: String) async throws {
        let (status, _) = try await TestServers.control("POST", "_gates/\(gate)/open", namespace: namespace)
        #expect(status == 200)
    }
}

/// Typed reads of `GET /_stats`.
struct ServerStats {
    let raw: [String: Any]
    init(_ raw: [String: Any]) { self.raw = raw }

    func int(_ path: String...) -> Int {
        var value: Any? = raw
        for key in path { value = (value as? [String: Any])?[key] }
        return (value as? Int) ?? 0
    }

    func requests(_ key: String) -> Int { int("requests", key) }
    var refreshCalls: Int { int("refreshCalls") }
    var refreshSuccesses: Int { int("auth", "refreshSuccesses") }
    var unauthorized: Int { int("auth", "unauthorized") }
    var authorized: Int { int("auth", "authorized") }
    var ordersCreated: Int { int("ordersCreated") }
    func ordersCreated(key: String) -> Int { int("ordersByKey", key) }
    var replays: Int { int("idempotency", "replays") }
}
