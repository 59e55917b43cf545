import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// A foreground upload kept pending after a network failure was sent again by `resumePending()`
/// with whoever was signed in then: u1's photo went to u2's account. Uploads now record their
/// account (`UploadManager.account`) and go only with a token of it; the proof is the stub's
/// record of the token each request carried.
@Suite("UploadManager: a pending upload and another user's sign-in", .timeLimit(.minutes(1)))
struct UploadAccountTests {
    @Test func aPendingUploadWaitsForItsAccountAndGoesWithItsToken() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("upload-account-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let source = root.appendingPathComponent("photo.jpg")
        try Data(repeating: 5, count: 512).write(to: source)

        let online = Locked(false)
        let tokensSeen = Locked<[String]>([])
        let transport = StubTransport { request in
            guard online.current else { throw URLError(.notConnectedToInternet) }
            tokensSeen.withLock { $0.append(request.value(forHTTPHeaderField: "Authorization") ?? "none") }
            return HTTPResponse(statusCode: 201, body: Data("{}".utf8), url: request.url)
        }
        let tokens = TokenManager(
            store: InMemoryTokenStore(),
            grant: .oauth2(tokenURL: TransfersFixture.baseURL.appendingPathComponent("oauth/token")))
        let client = APIClient(environment: TransfersFixture.environment) {
            $0.transport = transport
            $0.interceptors = .standard(tokenManager: tokens, retry: RetryInterceptor(budget: nil, circuitBreaker: nil))
        }
        let account = Locked<String?>(nil)
        let manager = try UploadManager(
            client: client, directory: root.appendingPathComponent("manager"),
            policy: .authorizedUpload.with(\.retry, .none), account: { account.current })
        try await tokens.signIn(AuthTokens(accessToken: "u1-a", refreshToken: "u1-rt"))
        account.set("u1")
        let id = try await manager.enqueue(fileAt: source, to: "/photos", contentType: "image/jpeg")
        await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }
        #expect(await manager.uploads.map(\.state) == [.pending])

        #expect(await manager.uploads.map(\.account) == ["u1"])

        // u2 signs in (the app reports no account across the switch, as documented).
        account.set(nil)
        try await tokens.signOut()
        try await tokens.signIn(AuthTokens(accessToken: "u2-a", refreshToken: "u2-rt"))
        account.set("u2")
        online.set(true)
        await manager.resumePending()
        await #expect(throws: NetworkError.signedOut) { _ = try await manager.result(for: id) }
        #expect(tokensSeen.current.isEmpty, "sent as \(tokensSeen.current)")
        #expect(await manager.uploads.map(\.state) == [.pending])

        // u1 again: the upload goes, with u1's token, once.
        account.set(nil)
        try await tokens.signOut()
        try await tokens.signIn(AuthTokens(accessToken: "u1-b", refreshToken: "u1-rt2"))
        account.set("u1")
        await manager.resumePending()
        _ = try await manager.result(for: id)
        #expect(tokensSeen.current == ["Bearer u1-b"])
    }

    @Test func aRecordWrittenBeforeAccountsWereRecordedBelongsToNone() throws {
        var record = UploadRecord(
            id: UUID(), method: "POST", url: TransfersFixture.baseURL, headers: [:], stagedFileName: "a", mode: .foreground,
            state: .pending, createdAt: Date(timeIntervalSince1970: 0))
        record.account = "u1"
        var object = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(record)) as? [String: Any])
        #expect(object["account"] as? String == "u1")
        object["account"] = nil  // as a registry written before the field existed
        let old = try JSONDecoder().decode(UploadRecord.self, from: JSONSerialization.data(withJSONObject: object))
        record.account = nil
        #expect(old == record)
    }
}
