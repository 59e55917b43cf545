import Foundation
import Testing
@testable import CourierTransfers

@Suite("Resumable upload store: file modes")
struct ResumableUploadStoreTests {
    /// A record an earlier version wrote 0644 stayed so while it was only read: the upload's URL,
    /// which lets whoever has it append to the user's upload, was readable by other local users.
    @Test("a record an earlier version left readable by others is made private when read")
    func aRecordLeftReadableIsMadePrivateWhenRead() throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        let store = ResumableUploadStore(directory: folder.records)
        let key = TusUploader.key(for: folder.file, creationURL: TusRecordFaultTests.creationURL)
        let record = ResumableUploadRecord(
            key: key, uploadURL: URL(string: "https://api.example.test/v1/tus/files/u1")!, offset: 400, length: 1000,
            createdAt: Date(), creationURL: TusRecordFaultTests.creationURL)
        try store.save(record)
        let file = try folder.recordFile()
        #expect(chmod(file.path, 0o644) == 0)

        #expect(try ResumableUploadStore(directory: folder.records).record(for: key)?.uploadURL == record.uploadURL)
        let mode = try FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
        #expect(mode?.intValue == 0o600)
    }
}
