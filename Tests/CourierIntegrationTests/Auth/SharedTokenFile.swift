import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// An app and its extensions on one token file, against the reference server: each "process" is a
/// token manager and a client with a `FileTokenStore` value of its own on the file (each opens the
/// file and its lock itself, as separate processes do).
struct SharedTokenFile {
    struct Process {
        let client: APIClient
        let manager: TokenManager
    }

    let namespace: String
    let environment: APIEnvironment
    let file: URL
    let gate: String

    /// A namespace of the reference server and a token file in a new temporary folder (removed by
    /// ``removeFolder()``).
    static func make(_ label: String) throws -> SharedTokenFile {
        let namespace = TestServers.makeNamespace(label)
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-\(label)-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return SharedTokenFile(
            namespace: namespace, environment: try TestServers.apiEnvironment(namespace: namespace),
            file: folder.appendingPathComponent("tokens.json"), gate: "refresh-\(UUID().uuidString.prefix(8))")
    }

    /// Removes the folder of the token file.
    func removeFolder() {
        try? FileManager.default.removeItem(at: file.deletingLastPathComponent())
    }

    /// A manager and client on the token file (the standard pipeline); its refreshes wait at
    /// `gate` when `gated`.
    func process(gated: Bool = false) throws -> Process {
        var components = try #require(
            URLComponents(url: environment.baseURL.appendingPathComponent("auth/refresh"), resolvingAgainstBaseURL: false))
        if gated { components.queryItems = [URLQueryItem(name: "gate", value: gate)] }
        let tokenURL = try #require(components.url)
        let transport = TestTransport.make()
        let manager = TokenManager(
            store: FileTokenStore(fileURL: file), transport: transport, grant: .oauth2(tokenURL: tokenURL))
        let client = APIClient(environment: environment) {
            $0.transport = transport
            $0.interceptors = .standard(tokenManager: manager, retry: RetryInterceptor(clock: TestClock()))
        }
        return Process(client: client, manager: manager)
    }

    /// Logs `username` in at the reference server (`POST /auth/login`, access tokens living
    /// `accessTtl` seconds, negative: already expired) and signs `process` in; returns what the
    /// file then holds.
    func signIn(_ process: Process, as username: String, accessTtl: Double) async throws -> AuthTokens {
        let tokens = try await login(process, as: username, accessTtl: accessTtl)
        try await process.manager.signIn(tokens)
        return try #require(try FileTokenStore(fileURL: file).read())
    }

    /// The tokens of a login through `process`'s client, not signed in anywhere.
    func login(_ process: Process, as username: String = "alice", accessTtl: Double) async throws -> AuthTokens {
        let login = try await process.client.response(
            for: Request<OAuthTokenResponse>.post(
                "/auth/login", body: AuthSession.Login(username: username, accessTtl: accessTtl)))
        return login.value.tokens(serverDate: login.response.date)
    }

    /// Sets the reference server's auth knobs for this namespace (`POST auth/config`).
    func configure(_ settings: [String: Any]) async throws {
        let (status, _) = try await TestServers.control("POST", "auth/config", namespace: namespace, json: settings)
        #expect(status == 200)
    }

    /// An app process with alice signed in on an expired access token, whose `GET /me` is out
    /// (the call's task) with its refresh held at the gate.
    func aliceCallingWithHerRefreshHeld() async throws -> (Process, Task<AuthSession.Me, any Error>) {
        let app = try process(gated: true)
        _ = try await signIn(app, as: "alice", accessTtl: -60)
        let call = Task { try await app.client.send(AuthSession.me) }
        try await waitUntilRefreshHeld()
        return (app, call)
    }

    /// Waits until the app's refresh is held at the gate (bounded: 6,000 checks, 5 ms apart).
    func waitUntilRefreshHeld() async throws {
        for _ in 0..<6000 {
            let (_, data) = try await TestServers.control("GET", "_gates/\(gate)", namespace: namespace)
            let object = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            if (object?["waiting"] as? Int) == 1 { return }
            try await Task.sleep(for: .milliseconds(5))
        }
        Issue.record("the refresh never reached gate \(gate)")
        throw CancellationError()
    }

    func openGate() async throws {
        let (status, _) = try await TestServers.control("POST", "_gates/\(gate)/open", namespace: namespace)
        #expect(status == 200)
    }

    func stats() async throws -> ServerStats { ServerStats(try await TestServers.stats(namespace: namespace)) }
}
