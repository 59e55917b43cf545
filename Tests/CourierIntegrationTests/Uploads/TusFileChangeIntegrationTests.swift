import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// A tus run whose file changes while a PATCH is on the way, and whose PATCH then fails: the run
/// must not leave a record that a later run resumes with the new version's bytes after the old
/// version's (a spliced upload the server reports complete).
@Suite("tus uploads against the reference server: a file changed during a PATCH that fails", .timeLimit(.minutes(1)))
struct TusFileChangeIntegrationTests {
    @Test func aFileChangedDuringAFailedPatchIsNeverResumed() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let old = UploadFixtures.bytes(300_000, seed: 3)
        let new = UploadFixtures.bytes(300_000, seed: 101)
        let file = try UploadFixtures.file(old)
        let store = ResumableUploadStore(directory: try UploadFixtures.folder())
        // The first PATCH stops after 30 000 bytes (of the old version) and waits; the user saves
        // the file again meanwhile; then the connection breaks and the run ends (no retries).
        try await TestServers.control(
            "POST", "_tus/control", namespace: namespace, json: ["holdPatches": [1], "holdAfter": 30_000])
        let first = TusIntegrationTests.interrupted(client, store: store).upload(fileAt: file, key: "clip")
        let (_, held) = try await TestServers.control("POST", "_tus/held", namespace: namespace)
        #expect((try JSONSerialization.jsonObject(with: held) as? [String: Any])?["held"] as? Int == 1)
        try new.write(to: file)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: file.path)
        try await TestServers.control("POST", "_tus/release", namespace: namespace)
        await #expect(throws: NetworkError.self) { _ = try await first.value }
        #expect(try store.record(for: "clip") == nil, "a later run would resume the old version's upload")

        // The same key again: the server must end up with the new version, whole.
        let location = try await TusIntegrationTests.uploader(client, store: store).upload(fileAt: file, key: "clip").value
        let info = try await TusIntegrationTests.info(location, namespace: namespace)
        #expect(info.complete)
        #expect(info.sha256 == UploadFixtures.sha256(new), "the upload mixes the old version's first bytes with the new one")
        #expect(info.sha256 != UploadFixtures.sha256(old.prefix(30_000) + new.dropFirst(30_000)))
    }

    /// The same without a change during the run: the run fails (a lost connection), its record
    /// stays for a resume, and the user saves the file again, at the same size, before the next
    /// run under the same key. The record knew only the length: the next run resumed the server's
    /// upload of the old version at its offset with the new version's bytes.
    @Test func aFileEditedBetweenRunsIsUploadedAnewUnderTheSameKey() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let old = UploadFixtures.bytes(300_000, seed: 5)
        let new = UploadFixtures.bytes(300_000, seed: 105)
        let file = try UploadFixtures.file(old)
        let store = ResumableUploadStore(directory: try UploadFixtures.folder())
        try await TestServers.control(
            "POST", "_tus/control", namespace: namespace, json: ["holdPatches": [1], "holdAfter": 30_000])
        let first = TusIntegrationTests.interrupted(client, store: store).upload(fileAt: file, key: "clip")
        _ = try await TestServers.control("POST", "_tus/held", namespace: namespace)
        try await TestServers.control("POST", "_tus/release", namespace: namespace)
        await #expect(throws: NetworkError.self) { _ = try await first.value }
        #expect(try store.record(for: "clip") != nil, "an unchanged file's upload stays resumable")

        try new.write(to: file)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: file.path)
        let location = try await TusIntegrationTests.uploader(client, store: store).upload(fileAt: file, key: "clip").value
        let info = try await TusIntegrationTests.info(location, namespace: namespace)
        #expect(info.complete)
        #expect(info.sha256 == UploadFixtures.sha256(new), "the upload mixes the old version's first bytes with the new one")
    }
}
