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

    /// The transport's folder and a missing folder of the destination were created 0755, and the
    /// file kept the mode of the session's temporary file: other local users could list and read
    /// the user's download.
    @Test("the downloaded file and the folders made for it are their owner's alone")
    func theDownloadedFileIsReadableByItsOwnerAlone() async throws {
        let (manager, folder) = try Self.setup()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("statements/media.bin")
        let id = try await manager.enqueue("/media/50000?digest=repr", to: destination)
        #expect(try await manager.result(for: id) == destination)
        #expect(try Data(contentsOf: destination).count == 50_000)
        let mode = { (url: URL) in
            try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
        }
        #expect(try mode(destination) == 0o600)
        #expect(try mode(destination.deletingLastPathComponent()) == 0o700)
        #expect(try mode(folder.appendingPathComponent("system")) == 0o700)
    }

    /// The default folder (`Courier-background-downloads` in the temporary directory) was one for
    /// every local user: the folder the first user made (0755, root's here) failed every other
    /// user's background downloads with `URLError.cannotMoveFile` after the server had sent the
    /// file, and a folder another user made first (0777) received the user's downloads, which its
    /// owner could replace before they were checked and moved into place.
    @Test(
        "a downloads folder another local user owns is never used; the default folder is the user's own",
        .enabled(if: geteuid() == 0, "giving a folder to another user needs root"))
    func aDownloadsFolderAnotherUserOwnsIsNotUsed() async throws {
        let (client, namespace) = try TestServers.apiClient()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bgdl-it-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let squatted = folder.appendingPathComponent("system")
        try FileManager.default.createDirectory(at: squatted, withIntermediateDirectories: true)
        #expect(chown(squatted.path, 65534, 65534) == 0)  // nobody's
        #expect(chmod(squatted.path, 0o777) == 0)
        let transport = URLSessionBackgroundTransport(configuration: .ephemeral, downloadsDirectory: squatted)
        let manager = try BackgroundDownloads(client: client, directory: folder.appendingPathComponent("m"), transport: transport)
        let destination = folder.appendingPathComponent("media.bin")
        let id = try await manager.enqueue("/media/50000?digest=repr", to: destination)
        await #expect(throws: DownloadError.self) { _ = try await manager.result(for: id) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: squatted.path).isEmpty)
        #expect(!FileManager.default.fileExists(atPath: destination.path))
        let stats = try await TestServers.stats(namespace: namespace)
        #expect(((stats["downloads"] as? [String: Any])?["log"] as? [Any])?.count == 1, "the server sent the file once")

        let defaultFolder = URLSessionBackgroundTransport(configuration: .ephemeral).downloadsDirectory
        #expect(defaultFolder.lastPathComponent == "Courier-background-downloads-\(geteuid())")
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

    @Test("two managers on one folder keep each other's downloads in the registry")
    func twoManagersOnOneFolderKeepEachOthersDownloads() async throws {
        let (client, namespace) = try TestServers.apiClient()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bgdl-it-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        // Two managers on one registry folder, each with a session of its own (two clients of one
        // app, or the app and an extension), both open before either enqueues.
        func manager(_ session: String) throws -> BackgroundDownloads {
            let transport = URLSessionBackgroundTransport(
                configuration: .ephemeral, downloadsDirectory: folder.appendingPathComponent("system-\(session)"))
            return try BackgroundDownloads(client: client, directory: folder.appendingPathComponent("m"), transport: transport)
        }
        let first = try manager("first")
        let second = try manager("second")

        let one = try await first.enqueue("/media/20000?digest=repr", to: folder.appendingPathComponent("one.bin"))
        let two = try await second.enqueue("/media/30000?digest=repr", to: folder.appendingPathComponent("two.bin"))
        #expect(try await first.result(for: one) == folder.appendingPathComponent("one.bin"))
        #expect(try await second.result(for: two) == folder.appendingPathComponent("two.bin"))

        // The server served each file once; a relaunch finds both downloads, completed.
        let stats = try await TestServers.stats(namespace: namespace)
        let served = ((stats["downloads"] as? [String: Any])?["log"] as? [Any])?.count
        #expect(served == 2)
        let relaunched = try manager("relaunched")
        let states = Dictionary(uniqueKeysWithValues: await relaunched.downloads.map { ($0.id, $0.state) })
        #expect(states == [one: .completed(statusCode: 200), two: .completed(statusCode: 200)])
    }

    @Test("managers on one folder writing the registry at once lose no download")
    func managersWritingAtOnceLoseNoDownload() async throws {
        let (client, namespace) = try TestServers.apiClient()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("bgdl-it-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        func manager(_ session: String) throws -> BackgroundDownloads {
            let transport = URLSessionBackgroundTransport(
                configuration: .ephemeral, downloadsDirectory: folder.appendingPathComponent("system-\(session)"))
            return try BackgroundDownloads(client: client, directory: folder.appendingPathComponent("m"), transport: transport)
        }
        let managers = try (0..<4).map { try manager("m\($0)") }

        // 40 downloads through 4 managers at once: their registry writes (enqueue, completion) overlap.
        let ids = try await withThrowingTaskGroup(of: UUID.self) { group in
            for index in 0..<40 {
                let manager = managers[index % managers.count]
                group.addTask {
                    let id = try await manager.enqueue(
                        "/media/\(1000 + index)", to: folder.appendingPathComponent("\(index).bin"))
                    _ = try await manager.result(for: id)
                    return id
                }
            }
            return try await group.reduce(into: Set<UUID>()) { $0.insert($1) }
        }

        let stats = try await TestServers.stats(namespace: namespace)
        #expect(((stats["downloads"] as? [String: Any])?["log"] as? [Any])?.count == 40)
        let relaunched = try manager("relaunched")
        let completed = await relaunched.downloads.filter { $0.state == .completed(statusCode: 200) }.map(\.id)
        #expect(Set(completed) == ids)
        #expect(completed.count == 40)
    }
}
