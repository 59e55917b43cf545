import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// Uploads while the token manager holds refreshes back after a transient failure
/// of the token endpoint. An upload whose token cannot be had *for now* must stay pending, as it
/// does when the refresh fails offline or with the endpoint's 503 itself.
@Suite("UploadManager: uploads during the token manager's hold stay pending", .timeLimit(.minutes(1)))
struct UploadDuringTokenHoldTests {
    static let start = Date(timeIntervalSince1970: 1_800_000_000)

    struct Setup {
        let server: FakeTokenServer
        let tokens: TokenManager
        let tokenEndpointDown: Locked<Bool>
        let clock: Locked<Date>
        let folder: URL
        let file: URL
    }

    static func setup() throws -> Setup {
        let server = FakeTokenServer(now: start)
        let store = InMemoryTokenStore(server.signIn(accessExpiresAt: start.addingTimeInterval(600)))
        let down = Locked(true)
        let clock = Locked(start)
        let tokenTransport = StubTransport { request in
            if request.url?.path.hasSuffix("/auth/refresh") == true, down.current {
                return .status(503, headers: ["Retry-After": "120"])
            }
            return server.handle(request)
        }
        let tokens = FakeTokenServer.tokenManager(tokenTransport, store: store) { clock.current }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("probe-hold-\(UUID().uuidString)")
        let file = folder.appendingPathComponent("photo.jpg")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data(repeating: 7, count: 1000).write(to: file)
        return Setup(server: server, tokens: tokens, tokenEndpointDown: down, clock: clock, folder: folder, file: file)
    }

    /// The system answers a background upload 401 (the token died server-side) while refreshes
    /// are held back: the re-authorization cannot get a token *now* — the upload must stay
    /// pending for `resumePending()`, as when the refresh is offline.
    @Test func aBackgroundReauthorizationDuringTheHoldStaysPendingAndGoesAfterIt() async throws {
        let setup = try Self.setup()
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        // A first refresh fails with 503 Retry-After 120: the hold starts.
        await #expect(throws: NetworkError.self) { _ = try await setup.tokens.refresh(failedToken: nil) }
        setup.server.expireAllAccessTokens()
        let background = ScriptedBackgroundTransport { setup.server.handle($0) }
        let manager = try UploadManager(
            client: TransfersFixture.client(setup.server.makeTransport()), directory: setup.folder.appendingPathComponent("m"),
            backgroundTransport: background, tokenManager: setup.tokens)
        let id = try await manager.enqueue(fileAt: setup.file, to: "/photos", contentType: "image/jpeg", mode: .background)
        let error = await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }
        #expect(error?.kind == .backendUnavailable)
        let state = await manager.uploads.first { $0.id == id }?.state
        #expect(state == .pending, "the upload was failed for good during a temporary hold: \(String(describing: state))")

        // The token endpoint is back and the hold over: resumePending hands it over refreshed.
        setup.tokenEndpointDown.set(false)
        setup.clock.set(Self.start.addingTimeInterval(121))
        await manager.resumePending()
        let response = try? await manager.result(for: id)
        #expect(response?.statusCode == 200)
    }

    /// A foreground upload whose token must be refreshed: with the token endpoint's 503 itself the
    /// upload stays pending; with the hold that follows (backendUnavailable), it must too.
    @Test func aForegroundUploadDuringTheHoldStaysPending() async throws {
        let setup = try Self.setup()
        defer { try? FileManager.default.removeItem(at: setup.folder) }
        setup.clock.set(Self.start.addingTimeInterval(900))  // the 600 s token has expired
        let client = TransfersFixture.client(setup.server.makeTransport()) {
            $0.interceptors = .standard(tokenManager: setup.tokens, retry: RetryInterceptor(maximumRetries: 0))
        }
        let manager = try UploadManager(
            client: client, directory: setup.folder.appendingPathComponent("m"), tokenManager: setup.tokens)
        // First upload: its refresh gets the 503 itself.
        let first = try await manager.enqueue(fileAt: setup.file, to: "/photos", contentType: "image/jpeg")
        let firstError = await #expect(throws: NetworkError.self) { _ = try await manager.result(for: first) }
        let firstState = await manager.uploads.first { $0.id == first }?.state
        // Second upload: during the hold.
        let second = try await manager.enqueue(fileAt: setup.file, to: "/photos", contentType: "image/jpeg")
        let secondError = await #expect(throws: NetworkError.self) { _ = try await manager.result(for: second) }
        let secondState = await manager.uploads.first { $0.id == second }?.state
        #expect(firstError?.statusCode == 503)
        #expect(firstState == .pending, "first (503): \(String(describing: firstState))")
        #expect(secondError?.kind == .backendUnavailable)
        #expect(secondState == .pending, "second (held, backendUnavailable): \(String(describing: secondState))")
    }
}
