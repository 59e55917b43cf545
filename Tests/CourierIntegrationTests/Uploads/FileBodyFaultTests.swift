import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// A `.file` body whose file is missing, is a folder, or shrinks before or while it is sent fails
/// the call with `invalidRequest`, and the server never completes an upload: never an empty or
/// shortened body reported as a success. The proof is the server's count of completed uploads.
@Suite("File bodies that cannot be read to their end fail the call (reference server)")
struct FileBodyFaultTests {
    private func completedUploads(_ namespace: String) async throws -> Int {
        let stats = try await TestServers.stats(namespace: namespace)
        let uploads = stats["uploads"] as? [String: Any]
        return uploads?["completed"] as? Int ?? 0
    }

    private func expectInvalidRequest(
        _ body: RequestBody, client: APIClient, mentioning fragment: String
    ) async throws {
        do {
            let answer = try await client.send(UploadIntegrationTests.count(body))
            Issue.record("expected invalidRequest, the server answered with \(answer.bytes) bytes")
        } catch let error as NetworkError {
            #expect(error.kind == .invalidRequest, "\(error)")
            #expect("\(error)".contains(fragment), "\(error)")
        }
    }

    @Test("a missing file and a folder fail before anything is sent")
    func missingFileOrFolder() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let folder = try UploadFixtures.file(Data([1])).deletingLastPathComponent()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await expectInvalidRequest(
            .file(folder.appendingPathComponent("missing.bin")), client: client, mentioning: "missing.bin")
        try await expectInvalidRequest(.file(folder), client: client, mentioning: "not a regular file")
        #expect(try await completedUploads(namespace) == 0)
    }

    @Test("a file deleted after the body was made fails the call; nothing is uploaded")
    func deletedAfterTheBodyWasMade() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let url = try UploadFixtures.file(UploadFixtures.bytes(300_000))
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let body = RequestBody.file(url)
        try FileManager.default.removeItem(at: url)
        try await expectInvalidRequest(body, client: client, mentioning: "upload.bin")
        #expect(try await completedUploads(namespace) == 0)
    }

    @Test("a file that shrank after its length was taken fails the call mid-body; the upload never completes")
    func truncatedWhileSending() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let url = try UploadFixtures.file(UploadFixtures.bytes(2_000_000))
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let body = RequestBody.file(url)  // length: 2,000,000 bytes
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: 458_668)
        try handle.close()
        try await expectInvalidRequest(body, client: client, mentioning: "could not be read to its end")
        #expect(try await completedUploads(namespace) == 0)
    }

    @Test("a MessageBody whose producer fails mid-body fails the call with its error; the upload never completes")
    func producerFailsMidBody() async throws {
        struct ProducerFailed: Error, CustomStringConvertible {
            var description: String { "the recording stopped" }
        }
        let (client, namespace) = try UploadFixtures.client()
        let first = UploadFixtures.bytes(100_000)
        let chunks = AsyncThrowingStream<Data, any Error> { continuation in
            continuation.yield(first)
            continuation.finish(throwing: ProducerFailed())
        }
        let body = MessageBody(chunks, length: .known(300_000))
        try await expectInvalidRequest(
            .stream(BodyStream(body), contentType: "application/octet-stream"), client: client,
            mentioning: "the recording stopped")
        #expect(try await completedUploads(namespace) == 0)
    }
}
