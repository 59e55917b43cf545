import Foundation
import Testing
@testable import Courier

@Suite("Per-folder state")
struct FolderRegistryTests {
    final class State: Sendable {}

    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("folders-\(UUID().uuidString)", isDirectory: true)
    }

    @Test("two spellings of one folder share one state")
    func spellingsOfOneFolderShareOneState() throws {
        let base = Self.folder()
        defer { try? FileManager.default.removeItem(at: base) }
        let registry = FolderRegistry<State>()
        let folder = base.appendingPathComponent("Cookies", isDirectory: true)
        let link = base.appendingPathComponent("link", isDirectory: true)
        let state = registry.value(for: folder) { State() }
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: folder)
        #expect(registry.value(for: link) { State() } === state)
        #expect(registry.value(for: base.appendingPathComponent("link/../Cookies")) { State() } === state)
    }

    /// Inode numbers of deleted folders are given to new ones (at once on ext4 and tmpfs): the state
    /// of a deleted folder that is still held must not become another folder's.
    @Test("a new folder with the inode number of a deleted one does not get its state")
    func aNewFolderWithTheInodeOfADeletedOneGetsAStateOfItsOwn() throws {
        let base = Self.folder()
        defer { try? FileManager.default.removeItem(at: base) }
        let registry = FolderRegistry<State>()
        let deleted = base.appendingPathComponent("deleted", isDirectory: true)
        let state = registry.value(for: deleted) { State() }
        let key = FolderIdentity.key(of: deleted)
        try FileManager.default.removeItem(at: deleted)
        for index in 0..<100 {
            let folder = base.appendingPathComponent("new-\(index)", isDirectory: true)
            #expect(registry.value(for: folder) { State() } !== state)
            if FolderIdentity.key(of: folder) == key { return }  // the inode number was reused
        }
    }
}
