import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// An upload the server may already have stored is sent again only when that cannot store it
/// twice: the manager keeps a failed upload pending for ``UploadManager/resumePending()``, which
/// must not repeat a `POST` without an `Idempotency-Key` that the client's retries refused to repeat.
@Suite("Upload manager: no second send of an upload the server may have stored", .timeLimit(.minutes(1)))
struct UploadManagerResendTests {
    /// The server reads and stores the whole upload, then closes the connection unanswered: a
    /// keyless `POST` fails for good with the lost connection, and `resumePending` sends nothing
    /// more. It used to stay pending and go out again: two uploads stored on the server.
    @Test func aKeylessPostLostAfterTheServerStoredItIsNotSentAgain() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let directory = try UploadFixtures.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServers.inject("POST", "/uploads/count", [["action": "drop_after_store"]], namespace: namespace)
        let manager = try UploadManager(
            client: client, directory: directory, policy: UploadFixtures.policy.with(\.idempotency, .none))
        let original = try UploadFixtures.file(UploadFixtures.bytes(10_000))
        defer { try? FileManager.default.removeItem(at: original.deletingLastPathComponent()) }
        let id = try await manager.enqueue(fileAt: original, to: "/uploads/count", contentType: "application/octet-stream")

        let first = await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }
        if case .transport(let error) = first {
            #expect(error.code == .networkConnectionLost)
        } else {
            Issue.record("expected the lost connection, got \(String(describing: first))")
        }
        await manager.resumePending()
        await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }

        let uploads = try #require(try await TestServers.stats(namespace: namespace)["uploads"] as? [String: Any])
        #expect(uploads["attempts"] as? Int == 1)
        #expect(uploads["completed"] as? Int == 1)
        let states = await manager.uploads.map(\.state)
        #expect(states.count == 1 && states.allSatisfy { if case .failed = $0 { true } else { false } })
        #expect(UploadManagerTests.staged(directory).isEmpty, "the staged copy of a failed upload is removed")
    }

    /// The server stores the upload and answers `303 See Other` to a result on a host that
    /// cannot be reached (nothing listens on its port). The refused connection proves only that
    /// the `GET` of the result never left: the keyless `POST` fails for good, and `resumePending`
    /// sends nothing more. It stayed pending and went out again: two uploads stored.
    @Test func aKeylessPostWhoseSeeOtherTargetCannotBeReachedIsNotSentAgain() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let directory = try UploadFixtures.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let manager = try UploadManager(
            client: client, directory: directory, policy: UploadFixtures.policy.with(\.idempotency, .none))
        let original = try UploadFixtures.file(UploadFixtures.bytes(10_000))
        defer { try? FileManager.default.removeItem(at: original.deletingLastPathComponent()) }
        let id = try await manager.enqueue(
            fileAt: original, to: "/uploads/count?seeOther=http%3A%2F%2F127.0.0.1%3A1%2Fresult",
            contentType: "application/octet-stream")

        let first = await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }
        if case .transport(let error) = first {
            #expect(error.code == .cannotConnectToHost)
        } else {
            Issue.record("expected the refused connection, got \(String(describing: first))")
        }
        await manager.resumePending()
        await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }

        let uploads = try #require(try await TestServers.stats(namespace: namespace)["uploads"] as? [String: Any])
        #expect(uploads["completed"] as? Int == 1)
        let states = await manager.uploads.map(\.state)
        #expect(states.count == 1 && states.allSatisfy { if case .failed = $0 { true } else { false } })
    }

    /// The same upload under the policy's `Idempotency-Key` stays pending and goes out again with
    /// the same key, which lets the server answer the second sending from the first.
    @Test func aKeyedPostLostAfterTheServerStoredItIsSentAgainWithTheSameKey() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let directory = try UploadFixtures.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        try await TestServers.inject("POST", "/uploads/count", [["action": "drop_after_store"]], namespace: namespace)
        let manager = try UploadManager(client: client, directory: directory, policy: UploadFixtures.policy.with(\.retry, .none))
        let original = try UploadFixtures.file(UploadFixtures.bytes(10_000))
        defer { try? FileManager.default.removeItem(at: original.deletingLastPathComponent()) }
        let id = try await manager.enqueue(fileAt: original, to: "/uploads/count", contentType: "application/octet-stream")

        await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }
        #expect(await manager.uploads.map(\.state) == [.pending])
        await manager.resumePending()
        #expect(try await manager.result(for: id).statusCode == 200)

        let log = try await TestServers.requestLog(namespace: namespace, path: "/uploads/count")
        let keys = log.map { $0.header("Idempotency-Key") }
        #expect(keys.count == 2 && keys[0] != nil && keys[0] == keys[1], "\(keys)")
    }

    /// The app ends while a keyless `POST` upload is on its way (the server goes on reading and
    /// stores it); the relaunched app's manager, reading the registry the first left, fails the
    /// upload with the lost connection instead of sending it again. It used to send it again: two
    /// uploads stored. Stood for by a second manager on the same folder while the first sends.
    @Test func aKeylessPostThatAnEndedProcessBeganSendingIsNotSentAgainAtRelaunch() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let directory = try UploadFixtures.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let policy = UploadFixtures.policy.with(\.idempotency, .none)
        let first = try UploadManager(client: client, directory: directory, policy: policy)
        let original = try UploadFixtures.file(UploadFixtures.bytes(1 << 20))
        defer { try? FileManager.default.removeItem(at: original.deletingLastPathComponent()) }
        // The server reads 256 KiB per second (about 4 s): it is still reading at the relaunch,
        // also on a loaded machine.
        let id = try await first.enqueue(
            fileAt: original, to: "/uploads/count?delay=1", contentType: "application/octet-stream")

        // The relaunched app resumes while the server is still reading (the first manager stands
        // for the ended process): once the whole body left the client, so that the relaunch's
        // removal of the staged copy cannot cut the first sending short.
        let relaunched = try UploadManager(client: client, directory: directory, policy: policy)
        let progress = try #require(await first.progress(for: id))
        for await step in progress where step.completedBytes >= 1 << 20 { break }
        await first.endAsIfTheProcessEnded()  // what the kernel does when the process ends
        await relaunched.resumePending()
        let second = await #expect(throws: NetworkError.self) { _ = try await relaunched.result(for: id) }
        if case .transport(let error) = second {
            #expect(error.code == .networkConnectionLost)
        } else {
            Issue.record("expected the lost connection, got \(String(describing: second))")
        }
        #expect(try await first.result(for: id).statusCode == 200)

        let uploads = try #require(try await TestServers.stats(namespace: namespace)["uploads"] as? [String: Any])
        #expect(uploads["attempts"] as? Int == 1)
        #expect(uploads["completed"] as? Int == 1)
    }

    /// An app and its extension, each with a manager on the app group's folder: the extension
    /// resumes while the app's upload is on its way (the server still reading). It used to send
    /// the upload a second time (two attempts stored under one key) — or, for a keyless `POST`, to
    /// fail the upload the app was completing and remove its staged copy. The app holds the
    /// upload's claim, so the extension leaves it alone and later reads its outcome.
    @Test(arguments: [IdempotencyPolicy.automatic, .none])
    func anUploadAnotherLiveManagerIsSendingIsSentOnce(idempotency: IdempotencyPolicy) async throws {
        let (client, namespace) = try UploadFixtures.client()
        let directory = try UploadFixtures.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        let policy = UploadFixtures.policy.with(\.idempotency, idempotency)
        let app = try UploadManager(client: client, directory: directory, policy: policy)
        let original = try UploadFixtures.file(UploadFixtures.bytes(1 << 20))
        defer { try? FileManager.default.removeItem(at: original.deletingLastPathComponent()) }
        // The server reads 256 KiB per second: about 4 s on the wire.
        let id = try await app.enqueue(
            fileAt: original, to: "/uploads/count?delay=1", contentType: "application/octet-stream")
        let progress = try #require(await app.progress(for: id))
        for await step in progress where step.completedBytes > 0 { break }

        let sharing = try UploadManager(client: client, directory: directory, policy: policy)
        await sharing.resumePending()
        let during = try #require(try await TestServers.stats(namespace: namespace)["uploads"] as? [String: Any])
        if during["completed"] as? Int == 0 {
            // Still on the wire (on a loaded machine the app may be done by now: then there is
            // nothing to leave alone, and the counts below still hold).
            let asked = await #expect(throws: NetworkError.self) { _ = try await sharing.result(for: id) }
            #expect("\(String(describing: asked))".contains("another manager"))
        }
        #expect(try await app.result(for: id).statusCode == 200)

        await sharing.resumePending()
        #expect(try await sharing.result(for: id).statusCode == 200)
        let uploads = try #require(try await TestServers.stats(namespace: namespace)["uploads"] as? [String: Any])
        #expect(uploads["attempts"] as? Int == 1)
        #expect(uploads["completed"] as? Int == 1)
    }
}
