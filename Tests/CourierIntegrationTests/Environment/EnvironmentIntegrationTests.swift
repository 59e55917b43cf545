import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierEnvironments
import CourierTesting

@Suite("Environments against two reference servers")
struct EnvironmentIntegrationTests {
    struct Login: Encodable, Sendable {
        var username = "alice"
        var password = "secret"
    }

    struct CookieEcho: Decodable, Sendable {
        var cookie: String?
        var cookies: [String: String]
    }

    struct Me: Decodable, Sendable {
        var username: String
        var namespace: String
    }

    @Test("a switch moves every later request of every client to the other server")
    func switchMovesRequests() async throws {
        let servers = try TwoServers()
        let set = try servers.set()
        let client = try APIClient(environments: set, configure: TestTransport.configure)
        let other = try APIClient(environments: set, configure: TestTransport.configure)

        let before = try await client.send(Request<Echo>.get("/echo"))
        #expect(before.header("Host") == "127.0.0.1:\(servers.staging.port ?? 0)")
        try await set.switchEnvironment(to: "production")
        let after = try await client.send(Request<Echo>.get("/echo"))
        _ = try await other.send(Request<Echo>.get("/echo"))
        #expect(after.header("Host") == "127.0.0.1:\(servers.production.port ?? 0)")

        #expect(try await servers.log(servers.staging).filter { $0.path == "/echo" }.count == 1)
        #expect(try await servers.log(servers.production).filter { $0.path == "/echo" }.count == 2)
    }

    @Test("staging's bearer token and cookies never reach production; switching back finds them again")
    func stagingSecretsStayOnStaging() async throws {
        let servers = try TwoServers()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-env-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let set = try servers.set()
        let tokens = EnvironmentScoped { environment in
            TokenManager(
                store: FileTokenStore(directory: directory, namespace: environment.storageNamespace),
                transport: TestTransport.make(),
                grant: .oauth2(tokenURL: environment.baseURLs["default"]!.appendingPathComponent("auth/refresh")))
        }
        let logger = CapturingNetworkLogger()
        let client = try APIClient(environments: set) { configuration, environment in
            TestTransport.configure(&configuration, environment)
            configuration.interceptors = [
                RequestIDInterceptor(), LoggingInterceptor(logger: logger),
                AuthInterceptor(tokenManager: tokens[environment]),
            ]
        }

        // Staging: sign in, call a protected route, receive a cookie.
        let login = try await client.send(Request<OAuthTokenResponse>.post("/auth/login", body: Login()))
        let staging = tokens[try #require(set.environment("staging"))]
        try await staging.signIn(login.tokens())
        let me = try await client.send(Request<Me>.get("/me").policy(.authorizedRead))
        #expect(me.namespace == servers.namespace)
        try await client.send(Request<Void>.get("/cookies/set", query: ["session": "staging-cookie-value"]))
        let stagingCookies = try await client.send(Request<CookieEcho>.get("/cookies"))
        #expect(stagingCookies.cookies == ["session": "staging-cookie-value"])

        // Production: the same calls carry neither.
        try await set.switchEnvironment(to: "production")
        let productionCookies = try await client.send(Request<CookieEcho>.get("/cookies"))
        #expect(productionCookies.cookie == nil)
        _ = try await client.send(Request<Echo>.get("/echo"))
        let protected = await #expect(throws: NetworkError.self) {
            try await client.send(Request<Me>.get("/me").policy(.authorizedRead))
        }
        #expect(protected?.kind == .signedOut)

        let productionLog = try await servers.log(servers.production)
        #expect(productionLog.map(\.path) == ["/cookies", "/echo"])
        for entry in productionLog {
            #expect(entry.header("Authorization") == nil)
            #expect(entry.header("Cookie") == nil)
            for value in entry.headers.values {
                #expect(!value.contains(login.accessToken))
                #expect(!value.contains("staging-cookie-value"))
            }
        }
        // Tokens are stored per environment: production's file was never written.
        #expect(FileManager.default.fileExists(atPath: directory.appendingPathComponent("tokens.staging.json").path))
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("tokens.production.json").path))

        // Back on staging, the session is still there (sessions kept per environment).
        try await set.switchEnvironment(to: "staging")
        _ = try await client.send(Request<Me>.get("/me").policy(.authorizedRead))
        let stagingAgain = try await client.send(Request<CookieEcho>.get("/cookies"))
        #expect(stagingAgain.cookies == ["session": "staging-cookie-value"])
        #expect(!logger.text.contains(login.accessToken))
    }

    @Test("control: one transport shared by clients of both servers does leak the cookie (what the set prevents)")
    func sharedTransportLeaksCookies() async throws {
        let servers = try TwoServers()
        let shared = TestTransport.make()
        let staging = APIClient(
            environment: APIEnvironment(name: "staging", baseURL: TwoServers.base(servers.staging, servers.namespace))
        ) {
            $0.transport = shared
        }
        let production = APIClient(
            environment: APIEnvironment(name: "production", baseURL: TwoServers.base(servers.production, servers.namespace))
        ) {
            $0.transport = shared
        }
        try await staging.send(Request<Void>.get("/cookies/set", query: ["session": "staging-cookie-value"]))
        let leaked = try await production.send(Request<CookieEcho>.get("/cookies"))
        #expect(leaked.cookies == ["session": "staging-cookie-value"])
    }

    @Test("signing out on switch: leaving staging clears its token file and cookies")
    func signedOutOnSwitch() async throws {
        let servers = try TwoServers()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-env-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let set = try servers.set(sessionsOnSwitch: .signedOut)
        let tokens = EnvironmentScoped { environment in
            TokenManager(
                store: FileTokenStore(directory: directory, namespace: environment.storageNamespace),
                transport: TestTransport.make(),
                grant: .oauth2(tokenURL: environment.baseURLs["default"]!.appendingPathComponent("auth/refresh")))
        }
        let client = try APIClient(environments: set) { configuration, environment in
            TestTransport.configure(&configuration, environment)
            configuration.interceptors = [AuthInterceptor(tokenManager: tokens[environment])]
        }
        let login = try await client.send(Request<OAuthTokenResponse>.post("/auth/login", body: Login()))
        try await tokens[try #require(set.environment("staging"))].signIn(login.tokens())
        try await client.send(Request<Void>.get("/cookies/set", query: ["session": "staging-cookie-value"]))

        try await set.switchEnvironment(to: "production")
        try await set.switchEnvironment(to: "staging")
        #expect(!FileManager.default.fileExists(atPath: directory.appendingPathComponent("tokens.staging.json").path))
        #expect(try await client.send(Request<CookieEcho>.get("/cookies")).cookie == nil)
        await #expect(throws: NetworkError.self) { try await client.send(Request<Me>.get("/me").policy(.authorizedRead)) }
    }

    @Test("the persisted choice survives a new set and a new client; a locked App Store build stays on production")
    func persistenceAndLock() async throws {
        let servers = try TwoServers()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-env-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("environment")

        let launch1 = try servers.set(channel: .testFlight, store: FileEnvironmentChoiceStore(fileURL: file))
        try await launch1.switchEnvironment(to: "production")

        let launch2 = try servers.set(channel: .testFlight, store: FileEnvironmentChoiceStore(fileURL: file))
        #expect(launch2.decision.source == .persisted)
        let client = try APIClient(environments: launch2, configure: TestTransport.configure)
        let echo = try await client.send(Request<Echo>.get("/echo"))
        #expect(echo.header("Host") == "127.0.0.1:\(servers.production.port ?? 0)")

        let appStore = try servers.set(
            channel: .appStore, override: EnvironmentOverride(environmentID: "staging", origin: .environmentVariable),
            store: FileEnvironmentChoiceStore(fileURL: file))
        let locked = try APIClient(environments: appStore, configure: TestTransport.configure)
        await #expect(throws: EnvironmentError.switchingForbidden(current: "production", channel: .appStore)) {
            try await appStore.switchEnvironment(to: "staging")
        }
        _ = try await locked.send(Request<Echo>.get("/echo/locked"))
        #expect(try await servers.log(servers.production).filter { $0.path == "/echo/locked" }.count == 1)
        #expect(try await servers.log(servers.staging).isEmpty)
    }
}
