import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// A tus run reads its chunks from the file itself: a file that changes during the run must not
/// leave the server an upload made of two versions, reported as done.
@Suite("tus uploads: a file that changes during the run")
struct TusFileChangeTests {
    /// Rewrites `folder`'s file with other bytes of the same size and a later modification date
    /// (the user saved the document again).
    static func rewrite(_ folder: TusRecordFaultTests.Folder) throws {
        try Data(folder.bytes.reversed()).write(to: folder.file)
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: folder.file.path)
    }

    @Test(
        "a file rewritten while a chunk is sent fails the run before the next chunk, and its record is removed",
        arguments: [1, 3])
    func aRewrittenFileIsNotSpliced(rewrittenDuringPatch: Int) async throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        // 1000 bytes in chunks of 400: three PATCHes; the third completes the upload.
        let transport = TusRecordFaultTests.server(
            headOffset: { 0 },
            patch: { number, url, offset, length in
                if number == rewrittenDuringPatch { try Self.rewrite(folder) }
                return TusRecordFaultTests.confirm(offset + length, url: url)
            })
        let uploader = TusRecordFaultTests.uploader(transport, folder)
        let error = await #expect(throws: NetworkError.self) { _ = try await uploader.upload(fileAt: folder.file).value }
        #expect(error?.kind == .invalidRequest)
        #expect(error.map { "\($0)" }?.contains("changed while it was being uploaded") == true)
        let patches = transport.requests.filter { $0.httpMethod == "PATCH" }.count
        #expect(patches == rewrittenDuringPatch, "sent \(patches) PATCHes; chunks after the change come from another file")
        #expect(try uploader.store.allRecords().isEmpty, "a later run would resume the mixed upload")
    }

    @Test("a file left alone uploads as before")
    func anUnchangedFileUploads() async throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        let transport = TusRecordFaultTests.server(headOffset: 0)
        let location = try await TusRecordFaultTests.uploader(transport, folder).upload(fileAt: folder.file).value
        #expect(location.path == "/v1/tus/files/new")
        #expect(transport.requests.filter { $0.httpMethod == "PATCH" }.count == 3)
    }
}
