import Foundation
import Testing
@testable import Courier

/// `AtomicFile.write(_:to:durable:)`: the whole new file or the old one, never a temporary left
/// behind; a failure is a `CocoaError` naming the path. (That `durable` flushes the file and its
/// directory is a system call — `strace -f -e trace=fsync` shows two per durable write.)
@Suite struct AtomicFileTests {
    private static func scratchDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-atomic-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("a durable write replaces the file with exactly the new bytes and leaves no temporary", arguments: [false, true])
    func replacesTheFile(durable: Bool) throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("registry.json")
        try AtomicFile.write(Data("old".utf8), to: file, durable: durable)
        let bytes = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try AtomicFile.write(bytes, to: file, durable: durable)
        #expect(try Data(contentsOf: file) == bytes)
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["registry.json"])
    }

    /// A cookie jar, a cached authorized response, a snapshot: the file was created 0644 under the
    /// usual umask (022), so any local user could read the session cookie in it.
    @Test("what it writes is readable by its owner alone", arguments: [false, true])
    func writesFilesReadableByTheirOwnerAlone(durable: Bool) throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("Cookies/production/alice.cookies")
        try AtomicFile.write(Data("session=s-1".utf8), to: file, durable: durable)
        let mode = { (url: URL) in
            try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
        }
        #expect(try mode(file) == 0o600)
        // The folders it created list their files (whose names say whose they are) to their owner alone.
        #expect(try mode(file.deletingLastPathComponent()) == 0o700)
        #expect(try mode(directory.appendingPathComponent("Cookies")) == 0o700)
        // Replacing a file written before (0644 by an earlier version) leaves the new one private too.
        #expect(chmod(file.path, 0o644) == 0)
        try AtomicFile.write(Data("session=s-2".utf8), to: file, durable: durable)
        #expect(try mode(file) == 0o600)
        #expect(try Data(contentsOf: file) == Data("session=s-2".utf8))
    }

    @Test("a write under a path that is a file fails with a CocoaError and writes nothing", arguments: [false, true])
    func failsTyped(durable: Bool) throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let blocker = directory.appendingPathComponent("not-a-folder")
        try Data("x".utf8).write(to: blocker)
        #expect(throws: CocoaError.self) {
            try AtomicFile.write(Data("new".utf8), to: blocker.appendingPathComponent("registry.json"), durable: durable)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["not-a-folder"])
    }

    @Test("a durable write over a directory fails with the rename's error and removes its temporary")
    func renameFailureIsTyped() throws {
        let directory = try Self.scratchDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let occupied = directory.appendingPathComponent("registry.json")
        try FileManager.default.createDirectory(at: occupied.appendingPathComponent("inside"), withIntermediateDirectories: true)
        do {
            try AtomicFile.write(Data("new".utf8), to: occupied, durable: true)
            Issue.record("the write over a directory succeeded")
        } catch let error as CocoaError {
            #expect(error.code == .fileWriteUnknown)
            #expect(error.localizedDescription.contains("rename(2)") || "\(error)".contains("rename(2)"))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["registry.json"])
    }
}
