import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

extension TusIntegrationTests {
    /// The creation `POST` whose connection breaks after the server created the upload (before
    /// any answer byte) is not sent again: a tus server does not know the `Idempotency-Key`, so a
    /// second `POST` creates a second upload. The server counts one creation; it counted 2 (the
    /// retry step sent the `POST` again under the policy's key, and the run went on with the
    /// second upload, the first left on the server).
    @Test func aCreationLostAfterTheServerCreatedTheUploadIsNotSentAgain() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let data = UploadFixtures.bytes(100_000, seed: 31)
        let file = try UploadFixtures.file(data)
        let store = ResumableUploadStore(directory: try UploadFixtures.folder())
        try await TestServers.control(
            "POST", "_faults", namespace: namespace,
            json: ["path": "/tus/files", "method": "POST", "faults": [["action": "drop_after_store"]]])
        var failure: (any Error)?
        do {
            // Retries without waits: the retry step would send the creation again at once.
            let policy = UploadFixtures.policy.with(\.retry, RetryPolicy(maxRetries: 2, baseDelay: .zero, maxDelay: .zero))
            _ = try await Self.uploader(client, store: store, policy: policy).upload(fileAt: file).value
        } catch {
            failure = error
        }
        let log = try await TestServers.requestLog(namespace: namespace).filter { $0.path.contains("/tus/files") }
        let created = (try await TestServers.stats(namespace: namespace)["tus"] as? [String: Any])?["created"] as? Int
        #expect(
            created == 1,
            "\(log.map(\.method)), \(log.map { $0.header("Idempotency-Key") ?? "-" }), \(String(describing: failure))")
        #expect(log.map(\.method) == ["POST"])
        // The run ends with the lost connection; no record, so the next call creates anew.
        #expect((failure as? NetworkError)?.kind == .transport, "\(String(describing: failure))")
        #expect(try store.allRecords().isEmpty)
    }
}
