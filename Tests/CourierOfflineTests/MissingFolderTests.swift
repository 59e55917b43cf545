import Foundation
import Testing
import Courier
import CourierTesting
import CourierOffline

/// The queue's file in a folder that does not exist yet — Application Support in a new iOS app's
/// container, which the README's `supportDirectory.appendingPathComponent("outbox.sqlite")` names
/// on the first launch — as the other stores (`FileTokenStore`, `DiskCacheStorage`,
/// `SnapshotStore`) take their folders.
@Suite("Offline queue in a missing folder")
struct MissingFolderTests {
    @Test("a queue opened in a folder that does not exist yet creates it and delivers", arguments: OfflineTransport.allCases)
    func aQueueInAMissingFolderCreatesItAndDelivers(transport: OfflineTransport) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-folder")
        let client = makeClient(try OfflineServer.environment(namespace: namespace), transport: transport)
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        let path = dir.url.appendingPathComponent("Library/Application Support/outbox.sqlite").path

        let queue = try await MutationQueue.open(path: path, client: client, configuration: configuration)
        try await queue.enqueue(.json(id: "first-launch", method: .post, path: "/mutations", body: ["note": "hi"]))
        let report = try await queue.flush()

        #expect(report.sent == 1)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map(\.key) == ["first-launch"])
        #expect(log.deliveries == 1)
    }
}
