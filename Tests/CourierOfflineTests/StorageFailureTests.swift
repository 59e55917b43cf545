import Foundation
import Testing
import Courier
import CourierTesting
@testable import CourierOffline

/// A queue whose bookkeeping cannot be written (a read-only database, standing for a full disk or
/// a locked device too; and another connection holding the write lock) stops delivering:
/// a delivered mutation whose removal failed is never sent again, `flush()` returns, and the
/// queue delivers again once the write succeeds.
@Suite("Offline queue when storage cannot be written")
struct StorageFailureTests {
    @Test func aDeliveryThatCannotBeRecordedIsNeverSentAgain() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let stub = StubTransport { _ in .status(201) }
        let client = APIClient(environment: OfflineServer.unreachable) {
            $0.transport = stub
            $0.interceptors = .standard()
        }
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        let queue = try MutationQueue(path: dir.path("q.sqlite"), client: client, configuration: configuration)
        try await queue.enqueue(Mutation(id: "m1", method: .post, path: "/mutations", body: Data("{}".utf8)))
        try await queue.enqueue(Mutation(id: "m2", method: .post, path: "/mutations", body: Data("{}".utf8)))
        let events = await queue.events()

        // The database turns read-only: the queue can read its head and send it, but not record
        // the delivery.
        try await queue.refuseStorageWrites(true)
        let blocked = await queue.flush()
        #expect(stub.requestCount == 1, "only m1 went out; nothing after the failed removal")
        #expect(blocked.sent == 1)
        guard case .storage(let error)? = blocked.storageFailure else {
            Issue.record("expected a storage failure in the report, got \(String(describing: blocked.storageFailure))")
            return
        }
        #expect(error.code == 8)  // SQLITE_READONLY
        #expect(await queue.storageFailure != nil)

        // Flushing again while storage still fails sends nothing.
        let again = await queue.flush()
        #expect(stub.requestCount == 1)
        #expect(again.storageFailure != nil)

        // Storage works again: the removal is written first, then m2 goes out; m1 never again.
        try await queue.refuseStorageWrites(false)
        let recovered = await queue.flush()
        #expect(recovered.storageFailure == nil)
        #expect(await queue.storageFailure == nil)
        #expect(stub.requests.count == 2)
        #expect(recovered.pending == 0)

        var outcomes: [String] = []
        for await event in events {
            switch event.outcome {
            case .sent: outcomes.append("sent \(event.mutationID)")
            case .storageUnavailable: outcomes.append("storage unavailable \(event.mutationID)")
            default: outcomes.append("other \(event.mutationID)")
            }
            if outcomes.count == 3 { break }
        }
        #expect(outcomes == ["storage unavailable m1", "sent m1", "sent m2"])
    }
}
