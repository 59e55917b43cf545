import Foundation
import Testing
@testable import Courier
@testable import CourierTransfers

/// The staged copies `UploadManager` uploads from: the user's photo or form (a password field)
/// waits there, readable by its owner alone, whatever the original's mode.
@Suite("Upload staging: owner-only copies")
struct StagingStoreTests {
    private static func mode(_ url: URL) throws -> Int? {
        try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
    }

    @Test func aStagedCopyAndItsFolderAreReadableByTheirOwnerAlone() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("staging-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let source = root.appendingPathComponent("photo.jpg")
        try Data(repeating: 7, count: 2048).write(to: source)
        #expect(chmod(source.path, 0o644) == 0)
        let store = StagingStore(directory: root.appendingPathComponent("staged"))

        let copy = try store.stage(copying: source)
        #expect(try Data(contentsOf: store.url(of: copy)) == Data(repeating: 7, count: 2048))
        #expect(try Self.mode(store.url(of: copy)) == 0o600)
        #expect(try Self.mode(store.directory) == 0o700)
        #expect(try Self.mode(source) == 0o644, "the user's original is left as it was")

        var form = MultipartForm()
        try form.addField(named: "password", value: "pw-staged-private")
        let body = try store.stage(form)
        #expect(try Self.mode(store.url(of: body)) == 0o600)
    }

    /// A staged file no record names may be another manager's, staged and not yet recorded: it is
    /// removed as a leftover only once it is older than the grace.
    @Test func anUnrecordedStagedFileIsRemovedOnlyAfterTheGrace() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("staging-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let source = root.appendingPathComponent("photo.jpg")
        try Data(repeating: 7, count: 64).write(to: source)
        // An original last changed long ago: the copy is dated when it was staged, not then.
        try FileManager.default.setAttributes(
            [.modificationDate: Date(timeIntervalSince1970: 1_000_000)], ofItemAtPath: source.path)
        let store = StagingStore(directory: root.appendingPathComponent("staged"))
        let fresh = try store.stage(copying: source)
        let old = try store.stage(copying: source)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-2 * UploadManager.stagingGrace)], ofItemAtPath: store.url(of: old).path
        )

        store.removeAll(except: [], stagedBefore: Date().addingTimeInterval(-UploadManager.stagingGrace))

        #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory.path) == [fresh])
    }
}
