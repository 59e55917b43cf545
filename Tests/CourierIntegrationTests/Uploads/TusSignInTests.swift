import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// A tus upload's later requests go out under the sign-in of its first: the rest of one user's
/// file must never be sent with another user's token.
@Suite("tus: one sign-in per upload", .timeLimit(.minutes(1)))
struct TusSignInTests {
    struct Login: Encodable, Sendable {
        var username: String
        var password = "secret"
    }

    /// Alice's upload's second PATCH fails (503); while the uploader waits to recover, Alice signs
    /// out and Bob signs in. Nothing more may go out with Bob's token: the upload fails as signed
    /// out. It used to go on as Bob (HEAD and the remaining PATCHes carried Bob's token).
    @Test func theRestOfAnUploadIsNeverSentUnderAnotherSignIn() async throws {
        let namespace = TestServers.makeNamespace("tus-signin")
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        let tokens = TokenManager(
            store: InMemoryTokenStore(), transport: URLSessionTransport(),
            grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("auth/refresh")))
        let clock = TestClock(mode: .manual)
        let (client, _) = try TestServers.apiClient(namespace: namespace) {
            $0.interceptors = .standard(tokenManager: tokens)
            $0.clock = clock
        }
        let alice = try await client.send(
            Request<OAuthTokenResponse>.post("/auth/login", body: Login(username: "alice"), policy: .authRefresh))
        try await tokens.signIn(alice.tokens())
        try await TestServers.control("POST", "_tus/control", namespace: namespace, json: ["failPatches": [2]])

        let file = try UploadFixtures.file(UploadFixtures.bytes(200_000, seed: 31))
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let folder = try UploadFixtures.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let retry = RetryPolicy(maxRetries: 2, baseDelay: .seconds(1), maxDelay: .seconds(1), jitter: .none)
        let uploader = TusUploader(
            client: client, creationPath: "/tus/files", store: ResumableUploadStore(directory: folder), chunkSize: 64 << 10,
            policy: EndpointPolicy.authorizedUpload.with(\.retry, retry))
        let start = clock.now
        let upload = uploader.upload(fileAt: file)
        try await clock.waitForSleeper(until: start.advanced(by: .seconds(1)))
        let before = try await TestServers.requestLog(namespace: namespace).filter { $0.path.contains("/tus/files") }.count
        try await tokens.signOut()
        let bob = try await client.send(
            Request<OAuthTokenResponse>.post("/auth/login", body: Login(username: "bob"), policy: .authRefresh))
        try await tokens.signIn(bob.tokens())
        clock.advance(by: .seconds(1))

        let failure = await #expect(throws: NetworkError.self) { _ = try await upload.value }
        #expect(failure?.kind == .signedOut, "\(String(describing: failure))")
        let log = try await TestServers.requestLog(namespace: namespace).filter { $0.path.contains("/tus/files") }
        #expect(log.count == before, "sent under Bob's sign-in: \(log.dropFirst(before).map(\.method))")
    }
}
