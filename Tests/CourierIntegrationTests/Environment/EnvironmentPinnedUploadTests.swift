import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierEnvironments
import CourierTesting
import CourierTransfers

/// An upload made in one environment goes on only in that environment. Its later requests are
/// addressed to the upload URL that environment's server gave (or its path resolved there): sent
/// through another environment's pipeline they would carry that environment's access token to
/// it — which the pipeline refuses only when the other environment is on another origin, not for
/// two environments on one host (development and staging here).
@Suite("Environment switches and the uploads that outlive one call", .timeLimit(.minutes(1)))
struct EnvironmentPinnedUploadTests {
    /// development and staging on the first reference server (two paths of one origin),
    /// production on the second, each signed in with a token of its own; the build chooses
    /// staging. The client's retries and backoffs wait on `clock`.
    struct Fixture {
        let servers: TwoServers
        let set: EnvironmentSet
        let client: APIClient
        let clock: TestClock

        init() async throws {
            let servers = try TwoServers()
            let set = try servers.set()
            let clock = TestClock(mode: .manual)
            let tokens = EnvironmentScoped { environment in
                TokenManager(
                    store: InMemoryTokenStore(),
                    grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("auth/refresh")))
            }
            client = try APIClient(environments: set) { configuration, environment in
                TestTransport.configure(&configuration, environment)
                configuration.interceptors = .standard(tokenManager: tokens[environment], retry: RetryInterceptor(clock: clock))
                configuration.clock = clock
            }
            for environment in set.environments {
                try await tokens[environment].signIn(
                    AuthTokens(
                        accessToken: Self.accessToken(of: environment.id), refreshToken: "\(environment.id)-refresh-token",
                        expiresAt: Date().addingTimeInterval(3600)))
            }
            self.servers = servers
            self.set = set
            self.clock = clock
        }

        static func accessToken(of environment: String) -> String { "\(environment)-access-token" }

        /// The requests under `path` that reached staging's namespace of the first server, as
        /// `METHOD path Authorization`.
        func sentToStaging(under path: String) async throws -> [String] {
            try await servers.log(servers.staging).filter { $0.path.contains(path) }.map {
                "\($0.method) \($0.path) \($0.header("Authorization") ?? "-")"
            }
        }

        /// Every request any environment's server logged under `path` outside staging's namespace.
        func sentElsewhere(under path: String) async throws -> [String] {
            let development = try TwoServers(namespace: servers.namespace + "-dev")
            let logs = try await development.log(servers.first) + servers.log(servers.production)
            return logs.filter { $0.path.contains(path) }.map { "\($0.method) \($0.path)" }
        }
    }

    /// An upload enqueued on staging (to `/uploads/count`, no retries) that a 503 left pending,
    /// its manager, and the folders to remove afterwards.
    static func pendingStagingUpload(_ fixture: Fixture) async throws -> (UploadManager, UUID, [URL]) {
        try await TestServers.inject("POST", "/uploads/count", [["status": 503]], namespace: fixture.servers.namespace)
        let directory = try UploadFixtures.folder()
        let manager = try UploadManager(
            client: fixture.client, directory: directory, policy: EndpointPolicy.authorizedUpload.with(\.retry, .none))
        let file = try UploadFixtures.file(UploadFixtures.bytes(10_000))
        let id = try await manager.enqueue(fileAt: file, to: "/uploads/count", contentType: "application/octet-stream")
        await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }
        return (manager, id, [directory, file.deletingLastPathComponent()])
    }

    /// A foreground upload enqueued on staging is kept pending by a 503; the app switches to
    /// development (the same host) and calls `resumePending()`. It used to go out to staging's URL
    /// with development's access token. It waits for staging instead, and goes out with staging's
    /// token once the app is back there.
    @Test func aPendingUploadOfStagingIsNotSentWithAnotherEnvironmentsTokenAfterASwitch() async throws {
        let fixture = try await Fixture()
        let (manager, id, folders) = try await Self.pendingStagingUpload(fixture)
        defer { for folder in folders { try? FileManager.default.removeItem(at: folder) } }
        #expect(await manager.uploads.map(\.state) == [.pending])

        try await fixture.set.switchEnvironment(to: "development")
        await manager.resumePending()
        _ = try? await manager.result(for: id)
        let staging = "POST /uploads/count Bearer \(Fixture.accessToken(of: "staging"))"
        let sent = try await fixture.sentToStaging(under: "/uploads/count")
        #expect(sent == [staging], "staging's upload went out again after the switch: \(sent.dropFirst())")
        #expect(try await fixture.sentElsewhere(under: "/uploads/count").isEmpty)
        #expect(await manager.uploads.map(\.state) == [.pending], "kept for staging")

        try await fixture.set.switchEnvironment(to: "staging")
        await manager.resumePending()
        #expect(try await manager.result(for: id).statusCode == 200)
        #expect(try await fixture.sentToStaging(under: "/uploads/count") == [staging, staging])
    }

    /// The same upload when the app switches to production (another origin) meanwhile: the
    /// pipeline refuses staging's URL there, which used to fail the upload for good and delete its
    /// staged copy — switching back to staging could not send it any more. It waits for staging.
    @Test func aPendingUploadOfStagingIsKeptThroughASwitchToAnotherOrigin() async throws {
        let fixture = try await Fixture()
        let (manager, id, folders) = try await Self.pendingStagingUpload(fixture)
        defer { for folder in folders { try? FileManager.default.removeItem(at: folder) } }

        try await fixture.set.switchEnvironment(to: "production")
        await manager.resumePending()
        _ = try? await manager.result(for: id)
        #expect(await manager.uploads.map(\.state) == [.pending], "kept for staging")
        #expect(try await fixture.sentElsewhere(under: "/uploads/count").isEmpty)

        try await fixture.set.switchEnvironment(to: "staging")
        await manager.resumePending()
        #expect(try await manager.result(for: id).statusCode == 200)
        let uploads = try #require(try await TestServers.stats(namespace: fixture.servers.namespace)["uploads"] as? [String: Any])
        #expect(uploads["completed"] as? Int == 1)
    }

    /// A background upload handed over on staging with staging's token is answered 401, and the
    /// app has switched to development (the same host) by the time the manager reads the answer.
    /// The new hand-over must be signed by staging's token manager, which development's pipeline
    /// does not authenticate with: it used to fail the upload for good and delete its staged copy.
    /// It waits for staging, and is handed over again with a refreshed staging token there.
    @Test func aBackgroundUploadOfStagingAnswered401AfterASwitchWaitsForStaging() async throws {
        let servers = try TwoServers()
        let set = try servers.set()
        let tokens = EnvironmentScoped { environment in
            TokenManager(
                store: InMemoryTokenStore(), grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("auth/refresh")))
        }
        let client = try APIClient(environments: set) { configuration, environment in
            TestTransport.configure(&configuration, environment)
            configuration.interceptors = .standard(tokenManager: tokens[environment])
        }
        let staging = try #require(set.environment("staging"))
        let login = try await client.send(
            Request<OAuthTokenResponse>.post("/auth/login", body: EnvironmentIntegrationTests.Login()))
        try await tokens[staging].signIn(login.tokens())
        try await TestServers.inject(
            "POST", "/uploads/count", [["status": 401, "headers": ["WWW-Authenticate": #"Bearer error="invalid_token""#]]],
            namespace: servers.namespace)
        let directory = try UploadFixtures.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let background = HeldEventsTransport(
            URLSessionBackgroundTransport(
                configuration: .ephemeral, downloadsDirectory: directory.appendingPathComponent("system")))
        let manager = try UploadManager(
            client: client, directory: directory.appendingPathComponent("manager"), backgroundTransport: background,
            tokenManager: tokens[staging])
        let file = try UploadFixtures.file(UploadFixtures.bytes(10_000))
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let id = try await manager.enqueue(
            fileAt: file, to: "/uploads/count", contentType: "application/octet-stream", mode: .background)
        for await _ in background.arrived { break }  // the 401, held

        try await set.switchEnvironment(to: "development")
        background.release()
        _ = try? await manager.result(for: id)
        #expect(await manager.uploads.map(\.state) == [.pending], "kept for staging")

        try await set.switchEnvironment(to: "staging")
        await manager.resumePending()
        #expect(try await manager.result(for: id).statusCode == 200)
        let sent = try await servers.log(servers.staging).filter { $0.path == "/uploads/count" }.map {
            $0.header("Authorization")
        }
        #expect(sent.count == 2 && sent[0] == "Bearer \(login.accessToken)" && sent[1] != sent[0], "\(sent)")
        #expect(sent.allSatisfy { $0?.hasPrefix("Bearer ") == true })
    }

    /// A tus upload on staging: its second PATCH fails (503), and while the uploader waits to ask
    /// the server for its offset the app switches to development (the same host). Its HEAD and
    /// remaining PATCHes used to go to staging's upload URL with development's access token. The
    /// upload fails instead, and nothing is sent after the switch.
    @Test func aTusUploadOfStagingSendsNothingWithAnotherEnvironmentsTokenAfterASwitch() async throws {
        let fixture = try await Fixture()
        try await TestServers.control(
            "POST", "_tus/control", namespace: fixture.servers.namespace, json: ["failPatches": [2]])
        let file = try UploadFixtures.file(UploadFixtures.bytes(200_000, seed: 41))
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let folder = try UploadFixtures.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let retry = RetryPolicy(maxRetries: 2, baseDelay: .seconds(1), maxDelay: .seconds(1), jitter: .none)
        let uploader = TusUploader(
            client: fixture.client, creationPath: "/tus/files", store: ResumableUploadStore(directory: folder),
            chunkSize: 64 << 10, policy: EndpointPolicy.authorizedUpload.with(\.retry, retry))
        let upload = uploader.upload(fileAt: file)
        // The uploader's backoff after the failed PATCH (1 s on the client's clock).
        try await fixture.clock.waitForSleeper(for: .seconds(1))
        let before = try await fixture.sentToStaging(under: "/tus/files")
        try await fixture.set.switchEnvironment(to: "development")
        fixture.clock.advance(by: .seconds(1))

        let failure = await #expect(throws: NetworkError.self) { _ = try await upload.value }
        #expect(failure?.kind == .invalidRequest, "\(String(describing: failure))")
        let sent = try await fixture.sentToStaging(under: "/tus/files")
        #expect(before.count == 3, "POST and two PATCHes before the switch: \(before)")
        #expect(sent == before, "sent to staging's upload after the switch: \(sent.dropFirst(before.count))")
        #expect(try await fixture.sentElsewhere(under: "/tus/files").isEmpty)
    }
}

/// A background transport over another that holds the events it reports until ``release()``
/// (``arrived`` reports each as it comes): the answer to an upload is read when the test says.
final class HeldEventsTransport: BackgroundTransport, Sendable {
    private let base: URLSessionBackgroundTransport
    let events: AsyncStream<BackgroundTransferEvent>
    private let continuation: AsyncStream<BackgroundTransferEvent>.Continuation
    /// Every event of `base`, as it arrives.
    let arrived: AsyncStream<BackgroundTransferEvent>
    /// The events held so far; `nil` once released (later events pass at once).
    private let held = Locked<[BackgroundTransferEvent]?>([])

    init(_ base: URLSessionBackgroundTransport) {
        self.base = base
        (events, continuation) = AsyncStream.makeStream(of: BackgroundTransferEvent.self)
        let (arrived, report) = AsyncStream.makeStream(of: BackgroundTransferEvent.self)
        self.arrived = arrived
        Task { [held, continuation] in
            for await event in base.events {
                let passes = held.withLock { held -> Bool in
                    guard held != nil else { return true }
                    held?.append(event)
                    return false
                }
                if passes { continuation.yield(event) }
                report.yield(event)
            }
        }
    }

    /// Delivers the held events, and every later one as it comes.
    func release() {
        for event in held.withLock({ held in
            defer { held = nil }
            return held ?? []
        }) { continuation.yield(event) }
    }

    func startUpload(_ request: URLRequest, fromFile fileURL: URL, taskDescription: String) throws {
        try base.startUpload(request, fromFile: fileURL, taskDescription: taskDescription)
    }
    func startDownload(_ request: URLRequest, taskDescription: String) throws {
        try base.startDownload(request, taskDescription: taskDescription)
    }
    func runningTaskDescriptions() async -> [String] { await base.runningTaskDescriptions() }
    func cancelTask(withDescription taskDescription: String) async { await base.cancelTask(withDescription: taskDescription) }
}
