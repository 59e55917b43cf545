import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension AuthIntegrationTests {
    /// An app and its extension on one token file (each manager with its own `FileTokenStore`
    /// value, as two processes have), against the reference server: the extension changes the
    /// session while the app's refresh is held at the server (`POST /auth/refresh?gate=`).
    @Suite(.timeLimit(.minutes(1))) struct SharedTokenStoreSessionChangeTests {
        struct Process {
            let client: APIClient
            let manager: TokenManager
        }

        struct Setup {
            let namespace: String
            let environment: APIEnvironment
            let file: URL
            let gate: String

            /// A manager and client on the token file; its refreshes wait at `gate` when `gated`.
            func process(gated: Bool = false) throws -> Process {
                var components = try #require(
                    URLComponents(url: environment.baseURL.appendingPathComponent("auth/refresh"), resolvingAgainstBaseURL: false)
                )
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

            func signIn(_ process: Process, as username: String, accessTtl: Double) async throws -> AuthTokens {
                let login = try await process.client.response(
                    for: Request<OAuthTokenResponse>.post(
                        "/auth/login", body: AuthSession.Login(username: username, accessTtl: accessTtl)))
                try await process.manager.signIn(login.value.tokens(serverDate: login.response.date))
                return try #require(try FileTokenStore(fileURL: file).read())
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

        static func setUp() throws -> Setup {
            let namespace = TestServers.makeNamespace("shared-change")
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("courier-shared-change-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            return Setup(
                namespace: namespace, environment: try TestServers.apiEnvironment(namespace: namespace),
                file: folder.appendingPathComponent("tokens.json"), gate: "refresh-\(UUID().uuidString.prefix(8))")
        }

        /// alice's app refreshes her expired token; while the refresh is at the server, bob signs
        /// in in the extension. The app's refresh answer must not overwrite bob's tokens in the
        /// store: a third process (another extension) that starts then acts as bob, and the app's
        /// waiting call ends as a call of a sign-in another one replaced (`signedOut`), never sent
        /// as alice again.
        @Test func aRefreshAnsweredAfterAnotherProcessSignedInAnotherUserLeavesThatUsersTokens() async throws {
            let setup = try Self.setUp()
            defer { try? FileManager.default.removeItem(at: setup.file.deletingLastPathComponent()) }
            let app = try setup.process(gated: true)
            _ = try await setup.signIn(app, as: "alice", accessTtl: -60)
            let appCall = Task { try await app.client.send(AuthSession.me) }
            try await setup.waitUntilRefreshHeld()

            let appExtension = try setup.process()
            let bob = try await setup.signIn(appExtension, as: "bob", accessTtl: 3600)
            try await setup.openGate()
            await #expect(throws: NetworkError.signedOut) { try await appCall.value }

            #expect(try FileTokenStore(fileURL: setup.file).read() == bob)
            let later = try setup.process()
            #expect(try await later.client.send(AuthSession.me).username == "bob")
            #expect(try await app.client.send(AuthSession.me).username == "bob")
            let stats = try await setup.stats()
            #expect(stats.refreshCalls == 1)
            #expect(stats.requests("GET /me") == 2)  // bob's two calls: alice's expired token was never sent
        }

        /// alice's app refreshes; while the refresh is at the server, she signs out in the
        /// extension. The app's refresh answer must not write her tokens back: the store stays
        /// empty, and the app is signed out too.
        @Test func aRefreshAnsweredAfterAnotherProcessSignedOutDoesNotSignTheUserBackIn() async throws {
            let setup = try Self.setUp()
            defer { try? FileManager.default.removeItem(at: setup.file.deletingLastPathComponent()) }
            let app = try setup.process(gated: true)
            _ = try await setup.signIn(app, as: "alice", accessTtl: -60)
            let appCall = Task { try await app.client.send(AuthSession.me) }
            try await setup.waitUntilRefreshHeld()

            let appExtension = try setup.process()
            #expect(try await appExtension.manager.isSignedIn())
            try await appExtension.manager.signOut()
            try await setup.openGate()
            await #expect(throws: NetworkError.signedOut) { try await appCall.value }

            #expect(try FileTokenStore(fileURL: setup.file).read() == nil)
            #expect(try await !setup.process().manager.isSignedIn())
            #expect(try await !app.manager.isSignedIn())
            let stats = try await setup.stats()
            #expect(stats.refreshCalls == 1)
            #expect(stats.requests("GET /me") == 0)
        }
    }
}
