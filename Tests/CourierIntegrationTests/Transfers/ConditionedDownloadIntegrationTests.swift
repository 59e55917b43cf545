import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// The resume test of `DownloadIntegrationTests` with the connection drop made on the client's
/// side by a `ConditionedTransport` around the real transport, instead of the reference server's
/// `dropAfter` fault: the same Range/If-Range resume, from any server.
@Suite("Downloads on a conditioned network (integration)", .serialized)
struct ConditionedDownloadIntegrationTests {
    static let size = 2_000_000
    static let dropAt = 1 << 20
    static let tag = "\"m2000000-v0\""

    @Test func aDownloadDroppedByTheNetworkConditionsResumesWithRangeAndIfRange() async throws {
        let namespace = TestServers.makeNamespace("dlc")
        let network = ConditionedTransport(
            wrapping: TestTransport.make(), conditions: NetworkConditions(dropAfterBytes: Self.dropAt))
        let (client, _) = try TestServers.apiClient(namespace: namespace) { $0.transport = network }
        let fixture = DownloadFixture(
            client: client, namespace: namespace,
            folder: FileManager.default.temporaryDirectory.appendingPathComponent("courier-dl-\(namespace)", isDirectory: true))
        try FileManager.default.createDirectory(at: fixture.folder, withIntermediateDirectories: true)
        defer { fixture.cleanUp() }

        let response = try await client.download(DownloadFixture.media(Self.size), to: fixture.destination()).value
        #expect(response.statusCode == 206)
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(Self.size))

        // Server-side truth: a plain first request, then one resume from exactly the drop.
        let served = try await fixture.served()
        try #require(served.count == 2)
        #expect(served.map(\.range) == [nil, "bytes=\(Self.dropAt)-"])
        #expect(served[1].ifRange == Self.tag)
        #expect(served[1].status == 206 && served[1].start == Self.dropAt && served[1].bytesSent == Self.size - Self.dropAt)
    }
}
