import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
@testable import CourierTransfers

/// One resume data used by two downloads at once: they would share one partial file, the second
/// truncating it while the first writes (a file mixing two versions, reported as a success). The
/// partial file is held with an exclusive lock: the second fails at once and sends nothing.
@Suite("Downloads: one resume data used twice at once")
struct SharedResumeDataTests {
    static let body = Data((0..<200).map { UInt8($0) })

    @Test("the second download of the same resume data fails before sending; the first completes with the exact bytes")
    func secondResumeIsRefused() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("shared-resume-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let partial = folder.appendingPathComponent(PartialDownloadFile.folderName).appendingPathComponent("p.partial")
        try FileManager.default.createDirectory(at: partial.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Self.body.prefix(100).write(to: partial)
        let url = TransfersFixture.baseURL.appendingPathComponent("media/200")
        let resume = DownloadResumeData(
            url: url, offset: 100, validator: #""v1""#, expectedLength: 200, partialFileURL: partial)

        // The server answers the first request only when the test lets it.
        let received = Locked(0)
        let (release, releaseAll) = AsyncStream.makeStream(of: Void.self)
        let transport = StubTransport { _ in
            let number = received.withLock {
                $0 += 1
                return $0
            }
            if number == 1 {
                for await _ in release { break }
            }
            return HTTPResponse(
                statusCode: 206,
                headers: ["Content-Range": "bytes 100-199/200", "Content-Length": "100", "ETag": #""v1""#],
                body: Self.body.suffix(from: 100))
        }
        let client = TransfersFixture.client(transport)
        let first = client.download(Request<Void>.get("/media/200"), to: destination, resumingFrom: resume)
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while received.current == 0 {
            guard clock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(5))
        }

        let second = client.download(Request<Void>.get("/media/200"), to: destination, resumingFrom: resume)
        let error = await #expect(throws: DownloadError.self) { _ = try await second.value }
        #expect(String(describing: error).contains("being written by another download"))
        #expect(received.current == 1, "the second download sent nothing")

        releaseAll.finish()
        _ = try await first.value
        #expect(try Data(contentsOf: destination) == Self.body)
    }
}
