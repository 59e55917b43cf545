import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTransfers

/// ``BackgroundDownloads`` over ``URLSessionBackgroundTransport`` on an ordinary session (Linux
/// has no background sessions; the manager's logic is the same) against the reference server's
/// `/media` route with RFC 9530 digests.
@Suite("Background downloads (integration)")
struct BackgroundDownloadsIntegrationTests {
    static func setup() throws -> (BackgroundDownloads, URL) {
        let (client, _) = try TestServers.apiClient()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bgdl-it-\(UUID().uuidString)")
        let transport = URLSessionBackgroundTransport(
            configuration: .ephemeral, downloadsDirectory: folder.appendingPathComponent("system"))
        return (
            try BackgroundDownloads(client: client, directory: folder.appendingPathComponent("m"), transport: transport), folder
        )
    }

    @Test("a download with a Repr-Digest is verified and moved into place, with progress")
    func verifiedDownload() async throws {
        let (manager, folder) = try Self.setup()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("media.bin")
        let id = try await manager.enqueue("/media/300000?digest=repr", to: destination)
        let progress = Task { await manager.progress(for: id).reduce(into: [Int64]()) { $0.append($1.completedBytes) } }
        #expect(try await manager.result(for: id) == destination)
        let data = try Data(contentsOf: destination)
        #expect(data.count == 300_000)
        #expect(data.enumerated().allSatisfy { $0.element == UInt8($0.offset % 251) })
        let steps = await progress.value
        #expect(steps == steps.sorted())
    }

    @Test("a wrong digest fails the download and leaves nothing at the destination")
    func badDigest() async throws {
        let (manager, folder) = try Self.setup()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("bad.bin")
        let id = try await manager.enqueue("/media/50000?digest=bad", to: destination)
        let error = await #expect(throws: DownloadError.self) { _ = try await manager.result(for: id) }
        if case .digestMismatch? = error?.reason {} else { Issue.record("unexpected \(String(describing: error))") }
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("system").path)) ?? []
        #expect(leftovers.isEmpty)
    }
}
