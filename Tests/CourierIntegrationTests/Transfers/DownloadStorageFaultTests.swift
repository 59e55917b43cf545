import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTransfers

/// Downloads against storage that misbehaves and servers that answer a resume oddly: a folder
/// that vanishes mid-body, two downloads to one destination, resume data past the file's end, a
/// `416` naming another (weak) validator.
@Suite("Download storage faults (integration)", .serialized)
struct DownloadStorageFaultTests {
    static let small = 2_000_000

    /// The server holds the body's second half at a gate until the folder is gone (a 10 s stall
    /// was not enough on a loaded machine: the progress of the first half reached the test after
    /// the download had ended, and the test removed the finished file).
    @Test func aDestinationFolderRemovedMidBodyFailsTypedAndLeavesNoFile() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let folder = fixture.folder.appendingPathComponent("sub", isDirectory: true)
        let destination = folder.appendingPathComponent("file.bin")
        let gate = "rest"
        let task = fixture.client.download(
            DownloadFixture.media(Self.small, ["stallAfter": "1000000", "stallGate": gate]), to: destination)
        for await value in task.progress where value.completedBytes >= 1_000_000 {
            try FileManager.default.removeItem(at: folder)
            break
        }
        let (status, _) = try await TestServers.control("POST", "_gates/\(gate)/open", namespace: fixture.namespace)
        #expect(status == 200)
        let result = await task.result
        switch result {
        case .success:
            #expect(try Data(contentsOf: destination) == DownloadFixture.content(Self.small))
        case .failure(let error):
            guard case .fileSystem = error.reason else {
                Issue.record("expected a file-system error, got \(error)")
                return
            }
            #expect(!FileManager.default.fileExists(atPath: destination.path))
        }
        #expect(try await fixture.served().count == 1)
    }

    @Test func twoDownloadsOfChangingVersionsToOneDestinationLeaveOneWholeVersion() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let endpoint = DownloadFixture.media(Self.small, ["etag": "changing"])
        async let first = fixture.client.download(endpoint, to: fixture.destination()).result
        async let second = fixture.client.download(endpoint, to: fixture.destination()).result
        let results = await [first, second]
        for result in results {
            if case .failure(let error) = result { Issue.record("\(error)") }
        }
        let data = try Data(contentsOf: fixture.destination())
        #expect(data == DownloadFixture.content(Self.small) || data == DownloadFixture.content(Self.small, version: 1))
        #expect(fixture.leftovers() == ["file.bin"])
        #expect(try await fixture.served().count == 2)
    }

    @Test func resumeDataPastTheEndOfTheFileRestartsWithTheWholeFile() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let endpoint = DownloadFixture.media(Self.small, ["dropAfter": "\(1 << 20)"], retries: 0)
        let failure = await fixture.client.download(endpoint, to: fixture.destination()).result
        guard case .failure(let error) = failure, let resume = error.resumeData else {
            Issue.record("expected resume data, got \(failure)")
            return
        }
        // The partial file holds more bytes than the server's file now has: a 416 for 1 MB.
        let shorter = DownloadFixture.media(1_000_000, retries: 0)
        let moved = DownloadResumeData(
            url: try fixture.client.url(for: shorter), offset: resume.offset, validator: "\"m1000000-v0\"",
            expectedLength: nil, partialFileURL: resume.partialFileURL)
        let response = try await fixture.client.download(shorter, to: fixture.destination(), resumingFrom: moved).value
        #expect(response.statusCode == 200)
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(1_000_000))
        let served = try await fixture.served()
        #expect(served.map(\.status) == [200, 416, 200])
        #expect(fixture.leftovers() == ["file.bin"])
    }

    @Test func aFailedDownloadLeavesAnExistingDestinationUntouched() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let old = Data("the previous file".utf8)
        try old.write(to: fixture.destination())
        let endpoint = DownloadFixture.media(Self.small, ["dropAfter": "\(1 << 20)"], retries: 0)
        let result = await fixture.client.download(endpoint, to: fixture.destination()).result
        guard case .failure = result else {
            Issue.record("expected a failure, got \(result)")
            return
        }
        #expect(try Data(contentsOf: fixture.destination()) == old)
    }

    /// The partial file holds every byte of version 0; meanwhile the server's file was replaced by
    /// a version of the same length under a weak tag, and the server takes the Range before
    /// `If-Range` (`ifRange=ignore`): its `416 bytes */N` names `W/"m…-v1"`, not the tag that was
    /// sent. That is another representation: the old bytes must not be placed as the file.
    @Test func a416NamingAnotherWeakTagIsNotTakenForTheCompleteFile() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let size = 100_000
        let endpoint = DownloadFixture.media(
            size, ["dropAfter": "\(size - 1)", "etag": "weakened", "ifRange": "ignore"], retries: 0)
        let first = await fixture.client.download(endpoint, to: fixture.destination()).result
        guard case .failure(let error) = first, let resume = error.resumeData else {
            Issue.record("expected resume data, got \(first)")
            return
        }
        #expect(resume.validator == "\"m\(size)-v0\"")
        let handle = try FileHandle(forWritingTo: resume.partialFileURL)
        try handle.seekToEnd()
        try handle.write(contentsOf: DownloadFixture.content(size).suffix(1))
        try handle.close()
        let whole = DownloadResumeData(
            url: resume.url, offset: Int64(size), validator: resume.validator, expectedLength: Int64(size),
            partialFileURL: resume.partialFileURL)
        let result = await fixture.client.download(endpoint, to: fixture.destination(), resumingFrom: whole).result
        let served = try await fixture.served()
        #expect(served.map(\.status) == [200, 416, 200])
        #expect(served.map(\.etag) == ["\"m\(size)-v0\"", "W/\"m\(size)-v1\"", "W/\"m\(size)-v2\""])
        guard case .success(let response) = result else {
            Issue.record("expected the new version, got \(result)")
            return
        }
        #expect(response.statusCode == 200)
        // Byte i of version v is (i + v) % 251: version 0's bytes here would be the stale file.
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(size, version: 2))
        #expect(fixture.leftovers() == ["file.bin"])
    }
}
