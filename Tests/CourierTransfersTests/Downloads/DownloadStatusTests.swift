import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// Which 2xx answers are a file: a download never puts a "no content" or "not ready yet" answer
/// in place of the destination.
@Suite("Download statuses")
struct DownloadStatusTests {
    @Test("a 202 or a 204 fails the download and leaves the destination as it was", arguments: [202, 204, 205])
    func noFileInTheAnswer(status: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-status-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let destination = folder.appendingPathComponent("report.pdf")
        try Data("the previous report".utf8).write(to: destination)
        let body = status == 202 ? Data(#"{"status":"preparing"}"#.utf8) : Data()
        let answer = HTTPResponse(statusCode: status, headers: ["Content-Type": "application/json"], body: body)
        let client = TransfersFixture.client(StubTransport(responses: [.success(answer)]))

        let error = await #expect(throws: DownloadError.self) {
            _ = try await client.download(Request<Void>.get("/reports/7"), to: destination).value
        }
        guard case .network(let failure)? = error?.reason else {
            Issue.record("expected a network reason, got \(String(describing: error))")
            return
        }
        #expect(failure.statusCode == status)
        #expect(try Data(contentsOf: destination) == Data("the previous report".utf8))
    }

    @Test("a 203 (a transformed copy) is still the file")
    func nonAuthoritativeIsAFile() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-status-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let answer = HTTPResponse(statusCode: 203, headers: ["Content-Length": "4"], body: Data("data".utf8))
        let client = TransfersFixture.client(StubTransport(responses: [.success(answer)]))
        _ = try await client.download(Request<Void>.get("/media/4"), to: destination).value
        #expect(try Data(contentsOf: destination) == Data("data".utf8))
    }
}
