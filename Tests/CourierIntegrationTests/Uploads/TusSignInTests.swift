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
    /// Alice's upload's second PATCH fails (503); while the uploader waits to recover, Alice signs
    /// out and Bob signs in. Nothing more may go out with Bob's token: the upload fails as signed
    /// out. It used to go on as Bob (HEAD and the remaining PATCHes carried Bob's token).
    @Test func theRestOfAnUploadIsNeverSentUnderAnotherSignIn() async throws {
        let session = try await SignInSwitch.start("tus-signin")
        let (client, clock, namespace) = (session.client, session.clock, session.namespace)
        try await TestServers.control("POST", "_tus/control", namespace: namespace, json: ["failPatches": [2]])

        let file = try UploadFixtures.file(UploadFixtures.bytes(200_000, seed: 31))
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let folder = try UploadFixtures.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let retry = RetryPolicy(maxRetries: 2, baseDelay: .seconds(1), maxDelay: .seconds(1), jitter: .none)
        let uploader = TusUploader(
            client: client, creationPath: "/tus/files", store: ResumableUploadStore(directory: folder), chunkSize: 64 << 10,
            policy: EndpointPolicy.authorizedUpload.with(\.retry, retry))
        let upload = uploader.upload(fileAt: file)
        // The uploader's backoff (1 s, begun now) on the client's clock: the client's deadline
        // timer sleeps on it too and must not count.
        try await clock.waitForSleeper(for: .seconds(1))
        let before = try await TestServers.requestLog(namespace: namespace).filter { $0.path.contains("/tus/files") }.count
        try await session.switchToBob(thenAdvanceBy: .seconds(1))

        let failure = await #expect(throws: NetworkError.self) { _ = try await upload.value }
        #expect(failure?.kind == .signedOut, "\(String(describing: failure))")
        let log = try await TestServers.requestLog(namespace: namespace).filter { $0.path.contains("/tus/files") }
        #expect(log.count == before, "sent under Bob's sign-in: \(log.dropFirst(before).map(\.method))")
    }

    /// A record is keyed by the file and the creation URL, not by the account: Bob uploading the
    /// file Alice's failed upload left a record for would resume Alice's upload (a HEAD and
    /// PATCHes to her upload URL, with Bob's token). Resetting the store with the session at
    /// sign-out forgets it: Bob's upload is a new one, and nothing goes to Alice's upload URL.
    @Test func resettingTheStoreAtSignOutMakesTheNextAccountStartANewUpload() async throws {
        let session = try await SignInSwitch.start("tus-reset")
        let (client, namespace) = (session.client, session.namespace)
        try await TestServers.control("POST", "_tus/control", namespace: namespace, json: ["failPatches": [2]])
        let file = try UploadFixtures.file(UploadFixtures.bytes(200_000, seed: 32))
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let folder = try UploadFixtures.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = ResumableUploadStore(directory: folder)
        let uploader = TusUploader(
            client: client, creationPath: "/tus/files", store: store, chunkSize: 64 << 10,
            policy: EndpointPolicy.authorizedUpload.with(\.retry, .none))
        await #expect(throws: NetworkError.self) { _ = try await uploader.upload(fileAt: file).value }
        let alices = try #require(try store.allRecords().first).uploadURL

        try await client.resetSession(also: [store])
        #expect(try store.allRecords().isEmpty)
        try await session.signIn("bob")
        let before = try await TestServers.requestLog(namespace: namespace).count
        _ = try await uploader.upload(fileAt: file).value
        let bobs = try await TestServers.requestLog(namespace: namespace).dropFirst(before).filter {
            $0.path.contains("/tus/files")
        }
        #expect(bobs.first.map { "\($0.method) \($0.path)" } == "POST /tus/files")
        #expect(!bobs.contains { alices.path.hasSuffix($0.path) }, "sent to Alice's upload: \(bobs.map(\.path))")
    }
}
