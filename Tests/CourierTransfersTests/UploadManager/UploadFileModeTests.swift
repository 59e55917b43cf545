import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// The files and folders an `UploadManager` keeps: the registry, its lock file, the staged copies
/// of the files being uploaded and their folders, all its owner's alone.
@Suite("Upload manager: files readable by their owner alone")
struct UploadFileModeTests {
    static func mode(_ url: URL) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        return try #require(attributes[.posixPermissions] as? Int) & 0o777
    }

    /// A registry an earlier version wrote 0644 stayed so while it was only read (a launch that
    /// enqueued nothing): the user's uploads were listed to other local users.
    @Test("a registry an earlier version left readable by others is made private when read")
    func aRegistryLeftReadableIsMadePrivateWhenRead() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("upload-modes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let source = root.appendingPathComponent("statement.pdf")
        try Data(repeating: 7, count: 4096).write(to: source)
        let directory = root.appendingPathComponent("manager", isDirectory: true)
        let transport = StubTransport { _ in HTTPResponse(statusCode: 201, body: Data("{}".utf8)) }
        do {
            let manager = try UploadManager(client: TransfersFixture.client(transport), directory: directory, policy: .standard)
            let id = try await manager.enqueue(fileAt: source, to: "/statements", contentType: "application/pdf")
            _ = try await manager.result(for: id)
        }
        let registry = try #require(
            try FileManager.default.contentsOfDirectory(atPath: directory.path).first { $0.hasSuffix(".json") })
        let path = directory.appendingPathComponent(registry).path
        #expect(chmod(path, 0o644) == 0)
        let relaunched = try UploadManager(client: TransfersFixture.client(transport), directory: directory, policy: .standard)
        #expect(await relaunched.uploads.count == 1)
        #expect(try Self.mode(URL(fileURLWithPath: path)) == 0o600)
    }

    /// The registry's folder was created by its lock (mode 0755, the lock file 0644) before the
    /// registry's write could make it 0700, and the staged copy of the user's file kept the
    /// original's 0644 in a 0755 folder: other local users could read the file being uploaded.
    @Test("the registry, its lock, the staged copy and their folders are readable by their owner alone")
    func theUploadFilesAreReadableByTheirOwnerAlone() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("upload-modes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let source = root.appendingPathComponent("statement.pdf")
        try Data(repeating: 7, count: 4096).write(to: source)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: source.path)
        let directory = root.appendingPathComponent("manager", isDirectory: true)
        let staged = directory.appendingPathComponent("staged", isDirectory: true)
        // Taken while the server has the upload: the staged copy is still there.
        let seen = Locked<[String: Int]>([:])
        let transport = StubTransport { _ in
            var modes: [String: Int] = [:]
            for name in try FileManager.default.contentsOfDirectory(atPath: staged.path) {
                modes["staged/" + name] = try Self.mode(staged.appendingPathComponent(name))
            }
            seen.withLock { $0 = modes }
            return HTTPResponse(statusCode: 201, body: Data("{}".utf8))
        }
        let manager = try UploadManager(client: TransfersFixture.client(transport), directory: directory, policy: .standard)
        let id = try await manager.enqueue(fileAt: source, to: "/statements", contentType: "application/pdf")
        _ = try await manager.result(for: id)
        #expect(try Self.mode(directory) == 0o700)
        #expect(try Self.mode(staged) == 0o700)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0 != "staged" }
        #expect(!files.isEmpty)
        for name in files {
            #expect(try Self.mode(directory.appendingPathComponent(name)) == 0o600, "\(name)")
        }
        let stagedModes = seen.withLock { $0 }
        #expect(stagedModes.count == 1)
        #expect(stagedModes.values.allSatisfy { $0 == 0o600 }, "\(stagedModes)")
    }
}
