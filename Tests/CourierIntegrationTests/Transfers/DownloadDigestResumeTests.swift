import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
@testable import CourierTransfers

/// The whole representation's digest (`Repr-Digest`) across a resume: kept in the resume data and
/// checked when the resumed download completes, even by a `416` that carries no digest.
@Suite("Downloads: the representation's digest across a resume")
struct DownloadDigestResumeTests {
    @Test(
        "a download cancelled after its last byte and resumed with a 416 is still checked against the Repr-Digest",
        arguments: ["repr", "bad"])
    func a416CompletionIsChecked(_ digest: String) async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let size = 100_000
        let content = DownloadFixture.content(size)
        let endpoint = DownloadFixture.media(size, ["dropAfter": "\(size - 1)", "digest": digest], retries: 0)
        let first = await fixture.client.download(endpoint, to: fixture.destination()).result
        guard case .failure(let error) = first, let resume = error.resumeData else {
            Issue.record("expected resume data, got \(first)")
            return
        }
        var hasher = SHA256()
        hasher.update(content)
        let sha256 = Data(hasher.finalize())
        #expect(resume.representationSHA256?.count == 32)
        #expect((resume.representationSHA256 == sha256) == (digest == "repr"))
        // The last byte arrives too (as when the cancel came after it): a resume gets a 416.
        let handle = try FileHandle(forWritingTo: resume.partialFileURL)
        try handle.seekToEnd()
        try handle.write(contentsOf: content.suffix(1))
        try handle.close()
        let whole = DownloadResumeData(
            url: resume.url, offset: Int64(size), validator: resume.validator, expectedLength: Int64(size),
            partialFileURL: resume.partialFileURL, representationSHA256: resume.representationSHA256)
        let second = await fixture.client.download(endpoint, to: fixture.destination(), resumingFrom: whole).result
        #expect(try await fixture.served().map(\.status) == [200, 416])
        switch (digest, second) {
        case ("repr", .success(let response)):
            #expect(response.statusCode == 416)
            #expect(try Data(contentsOf: fixture.destination()) == content)
        case ("bad", .failure(let failure)):
            guard case .digestMismatch(let field, _, let actual) = failure.reason else {
                Issue.record("expected a digest mismatch, got \(failure)")
                return
            }
            #expect(field == "Repr-Digest")
            #expect(actual == DownloadDigest.hex(Array(sha256)))
            #expect(!FileManager.default.fileExists(atPath: fixture.destination().path))
        default:
            Issue.record("unexpected outcome \(second) for digest=\(digest)")
        }
    }
}
