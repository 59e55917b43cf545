import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// A background transport whose "system" answers each handed-over upload at once with `answer`.
final class ScriptedBackgroundTransport: BackgroundTransport, @unchecked Sendable {
    // @unchecked: the mutable parts are in Locked boxes.
    let events: AsyncStream<BackgroundTransferEvent>
    private let continuation: AsyncStream<BackgroundTransferEvent>.Continuation
    private let answer: @Sendable (URLRequest) async throws -> HTTPResponse
    private let sent = Locked<[URLRequest]>([])

    init(answer: @escaping @Sendable (URLRequest) async throws -> HTTPResponse) {
        (events, continuation) = AsyncStream.makeStream(of: BackgroundTransferEvent.self)
        self.answer = answer
    }

    var requests: [URLRequest] { sent.withLock { $0 } }

    func startUpload(_ request: URLRequest, fromFile fileURL: URL, taskDescription: String) throws {
        sent.withLock { $0.append(request) }
        Task { [answer, continuation] in
            let response = try await answer(request)
            continuation.yield(
                BackgroundTransferEvent(
                    taskDescription: taskDescription,
                    outcome: .uploaded(statusCode: response.statusCode, headers: response.headers, body: response.data)))
        }
    }

    func startDownload(_ request: URLRequest, taskDescription: String) throws {}
    func runningTaskDescriptions() async -> [String] { [] }
    func cancelTask(withDescription taskDescription: String) async {}
}

@Suite("Background uploads: the token at hand-over")
struct BackgroundUploadTokenTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    struct Setup {
        let server: FakeTokenServer
        let clock: TestClock
        let background: ScriptedBackgroundTransport
        let manager: UploadManager
        let file: URL
        let folder: URL
    }

    /// - Parameter offlineRefreshes: How many refreshes fail first with `notConnectedToInternet`.
    static func setup(offlineRefreshes: Int = 0) throws -> Setup {
        let clock = TestClock()
        let start = Self.start
        let server = FakeTokenServer(now: start)
        let store = InMemoryTokenStore(server.signIn(accessExpiresAt: start.addingTimeInterval(600)))
        let offline = Locked(offlineRefreshes)
        let tokenTransport = StubTransport { request in
            let fails =
                request.url?.path.hasSuffix("/auth/refresh") == true
                && offline.withLock { left in
                    defer { left = max(0, left - 1) }
                    return left > 0
                }
            if fails { throw URLError(.notConnectedToInternet) }
            return server.handle(request)
        }
        let tokens = FakeTokenServer.tokenManager(tokenTransport, store: store) {
            start.addingTimeInterval(Double(clock.now.offset.components.seconds))
        }
        let background = ScriptedBackgroundTransport { server.handle($0) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bg-token-\(UUID().uuidString)")
        let file = folder.appendingPathComponent("photo.jpg")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(repeating: 7, count: 1000).write(to: file)
        let manager = try UploadManager(
            client: TransfersFixture.client(server.makeTransport()), directory: folder.appendingPathComponent("manager"),
            backgroundTransport: background, tokenManager: tokens)
        return Setup(server: server, clock: clock, background: background, manager: manager, file: file, folder: folder)
    }

    static func bearer(_ request: URLRequest?) -> String? {
        request?.value(forHTTPHeaderField: "Authorization")
    }

    @Test(
        "a token manager the client's environment does not authenticate with signs nothing: the hand-over is refused",
        .timeLimit(.minutes(1)))
    func anotherEnvironmentsTokenManagerSignsNothing() async throws {
        let start = Self.start
        let server = FakeTokenServer(now: start)
        func tokens() -> TokenManager {
            FakeTokenServer.tokenManager(
                server.makeTransport(), store: InMemoryTokenStore(server.signIn(accessExpiresAt: start.addingTimeInterval(600)))
            ) { start }
        }
        // The app gave the manager staging's tokens; the client (its set switched) now
        // authenticates as production.
        let (staging, production) = (tokens(), tokens())
        let background = ScriptedBackgroundTransport { server.handle($0) }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bg-env-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("photo.jpg")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(repeating: 7, count: 1000).write(to: file)
        let client = TransfersFixture.client(server.makeTransport()) {
            $0.interceptors = [RequestIDInterceptor(), AuthInterceptor(tokenManager: production)]
        }
        let manager = try UploadManager(
            client: client, directory: folder.appendingPathComponent("manager"), backgroundTransport: background,
            tokenManager: staging)
        await #expect(throws: NetworkError.self) {
            try await manager.enqueue(fileAt: file, to: "/photos", contentType: "image/jpeg", mode: .background)
        }
        #expect(background.requests.isEmpty)

        // The manager of the client's own environment signs as before (a transport of its own:
        // a transport's events have one reader).
        let ownBackground = ScriptedBackgroundTransport { server.handle($0) }
        let signed = try UploadManager(
            client: client, directory: folder.appendingPathComponent("signed"), backgroundTransport: ownBackground,
            tokenManager: production)
        let id = try await signed.enqueue(fileAt: file, to: "/photos", contentType: "image/jpeg", mode: .background)
        #expect(try await signed.result(for: id).statusCode == 200)
        #expect(Self.bearer(ownBackground.requests.first)?.hasPrefix("Bearer ") == true)
    }

    @Test("an upload enqueued after the token expired is handed over with a refreshed token")
    func refreshesBeforeHandOver() async throws {
        let setup = try Self.setup()
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.clock.advance(by: .seconds(900))  // the 600 s token has expired
        let id = try await setup.manager.enqueue(
            fileAt: setup.file, to: "/photos", contentType: "image/jpeg", mode: .background)
        let response = try await setup.manager.result(for: id)
        #expect(response.statusCode == 200)
        #expect(setup.server.refreshCalls == 1)
        #expect(setup.background.requests.count == 1)
        #expect(Self.bearer(setup.background.requests.first)?.hasPrefix("Bearer ") == true)
    }

    @Test("a token still valid is used as it is: no refresh")
    func validTokenIsKept() async throws {
        let setup = try Self.setup()
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        let id = try await setup.manager.enqueue(
            fileAt: setup.file, to: "/photos", contentType: "image/jpeg", mode: .background)
        #expect(try await setup.manager.result(for: id).statusCode == 200)
        #expect(setup.server.refreshCalls == 0)
    }

    @Test("a late upload answered 401 is handed over once more with a refreshed token, and succeeds")
    func lateUploadIsReauthorized() async throws {
        let setup = try Self.setup()
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.server.expireAllAccessTokens()  // the system started the task after the token died
        let id = try await setup.manager.enqueue(
            fileAt: setup.file, to: "/photos", contentType: "image/jpeg", mode: .background)
        #expect(try await setup.manager.result(for: id).statusCode == 200)
        #expect(setup.server.refreshCalls == 1)
        let sent = setup.background.requests.map { Self.bearer($0) }
        #expect(sent.count == 2)
        #expect(sent[0] != sent[1])
    }

    @Test(
        "a 401 whose refresh cannot reach the server keeps the upload pending; resumePending hands it over refreshed",
        .timeLimit(.minutes(1)))
    func aReauthorizationOfflineWaitsForResumePending() async throws {
        let setup = try Self.setup(offlineRefreshes: 1)
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.server.expireAllAccessTokens()  // the system started the task after the token died
        let id = try await setup.manager.enqueue(
            fileAt: setup.file, to: "/photos", contentType: "image/jpeg", mode: .background)
        let error = await #expect(throws: NetworkError.self) { _ = try await setup.manager.result(for: id) }
        #expect(error?.kind == .offline)
        #expect(await setup.manager.uploads.first { $0.id == id }?.state == .pending, "kept, with its staged copy")
        #expect(setup.background.requests.count == 1)

        await setup.manager.resumePending()  // the network is back
        #expect(try await setup.manager.result(for: id).statusCode == 200)
        let sent = setup.background.requests.map { Self.bearer($0) }
        #expect(sent.count == 2)
        #expect(sent[0] != sent[1])
        #expect(setup.server.refreshCalls == 1)
    }

    @Test("a re-authorization waits for a locked token store or an offline refresh, not for a corrupted store or a sign-out")
    func reauthorizationFailuresThatWait() {
        let retry = EndpointPolicy.standard.retry
        #expect(UploadManager.waitsToReauthorize(.tokenStoreFailed(.keychain(operation: "read", status: -25308)), retry: retry))
        #expect(UploadManager.waitsToReauthorize(NetworkError(URLError(.notConnectedToInternet)), retry: retry))
        #expect(UploadManager.waitsToReauthorize(NetworkError(URLError(.timedOut)), retry: retry))
        #expect(!UploadManager.waitsToReauthorize(.tokenStoreFailed(.corrupted("not JSON")), retry: retry))
        #expect(!UploadManager.waitsToReauthorize(.signedOut, retry: retry))
        #expect(!UploadManager.waitsToReauthorize(NetworkError(URLError(.serverCertificateUntrusted)), retry: retry))
    }

    @Test("a second 401 fails the upload: handed over at most twice, no loop")
    func secondRejectionFails() async throws {
        let setup = try Self.setup()
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.server.enqueueResourceStatuses(401, 401)
        let id = try await setup.manager.enqueue(
            fileAt: setup.file, to: "/photos", contentType: "image/jpeg", mode: .background)
        let error = await #expect(throws: NetworkError.self) { _ = try await setup.manager.result(for: id) }
        #expect(error?.kind == .unauthorized)
        #expect(setup.background.requests.count == 2)
        #expect(setup.server.refreshCalls == 1)
    }
}

extension BackgroundUploadTokenTests {
    @Test("a background upload to another origin (a presigned storage URL) gets no access token")
    func noAccessTokenForAnotherOrigin() async throws {
        let setup = try BackgroundUploadTokenTests.setup()
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        _ = try? await setup.manager.enqueue(
            fileAt: setup.file, to: "https://bucket.storage.third-party.test/put?sig=abc", contentType: "image/jpeg",
            mode: .background)
        for request in setup.background.requests {
            #expect(request.url?.host == "bucket.storage.third-party.test")
            #expect(
                request.value(forHTTPHeaderField: "Authorization") == nil,
                "the environment's access token was handed to bucket.storage.third-party.test")
        }
        // The same URL in the foreground is refused before anything is sent (core origin check).
    }
}

extension BackgroundUploadTokenTests {
    @Test("a 401 after another user signed in fails the upload: the file is not sent again as the new user")
    func aRejectionAfterAnotherSignInIsNotHandedOverAsTheNewUser() async throws {
        let server = FakeTokenServer(now: Self.start)
        let tokens = FakeTokenServer.tokenManager(server.makeTransport(), store: InMemoryTokenStore(server.signIn())) {
            Self.start
        }
        let background = ScriptedBackgroundTransport { request in
            if request.value(forHTTPHeaderField: "Authorization") == "Bearer bob-token" { return .status(201) }
            // Alice signs out and Bob signs in while the system still runs her upload.
            try await tokens.signIn(AuthTokens(accessToken: "bob-token", refreshToken: "bob-refresh"))
            return .status(401, headers: ["WWW-Authenticate": "Bearer"])
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bg-token-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("alice.jpg")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(repeating: 7, count: 1000).write(to: file)
        let manager = try UploadManager(
            client: TransfersFixture.client(server.makeTransport()), directory: folder.appendingPathComponent("manager"),
            backgroundTransport: background, tokenManager: tokens)
        let id = try await manager.enqueue(fileAt: file, to: "/photos", contentType: "image/jpeg", mode: .background)
        await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }
        #expect(background.requests.map { Self.bearer($0) }.allSatisfy { $0 != "Bearer bob-token" })
        #expect(background.requests.count == 1)
    }
}
