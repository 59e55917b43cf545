import Foundation
import Testing
@testable import CourierEnvironments

@Suite("FileEnvironmentChoiceStore")
struct EnvironmentChoiceStoreTests {
    /// The file was written with the process's default mode (0644) in folders made 0755, where
    /// every file Courier writes whole is its owner's alone (0600).
    @Test("the saved choice and the folders made for it are their owner's alone")
    func theChoiceFileIsReadableByItsOwnerAlone() throws {
        let directory = try EnvironmentFixture.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("com.example.app/environment")
        let store = FileEnvironmentChoiceStore(fileURL: file)
        try store.save("staging")
        #expect(try store.load() == "staging")
        let mode = { (url: URL) in
            try (FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber)?.intValue
        }
        #expect(try mode(file) == 0o600)
        #expect(try mode(file.deletingLastPathComponent()) == 0o700)
        // A file an earlier version wrote is replaced by a private one.
        #expect(chmod(file.path, 0o644) == 0)
        try store.save("production")
        #expect(try mode(file) == 0o600)
        #expect(try store.load() == "production")
        #expect(try FileManager.default.contentsOfDirectory(atPath: file.deletingLastPathComponent().path) == ["environment"])
    }
}
