import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTransfers

/// A resumed download against a server that caps its range answers and never says the complete
/// length in them (`Content-Range: bytes a-b/*`, RFC 9110 §14.4): the end of a part is not the
/// end of the file.
@Suite("Downloads: capped parts of unknown length (integration)", .serialized)
struct DownloadPartsIntegrationTests {
    static let size = 300_000

    /// The first answer is a `200` cut off after 100 000 bytes, with `Content-Length` (the complete
    /// length is known: the last part ends the file) or chunked (nothing says it: only the `416` to
    /// a Range from byte 300 000 does); each continuation gets at most 64 000 bytes.
    @Test(
        "a download continued with capped 206 parts of unknown length asks on until the file's known end or the server's 416, byte-identical",
        arguments: [false, true])
    func cappedPartsOfUnknownLengthAreFollowedToTheEnd(chunked: Bool) async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        var query = ["dropAfter": "100000", "rangeCap": "64000", "length": "unknown"]
        if chunked { query["chunked"] = "1" }
        let response = try await fixture.client.download(DownloadFixture.media(Self.size, query), to: fixture.destination()).value
        #expect(response.statusCode == (chunked ? 416 : 206))
        #expect(try Data(contentsOf: fixture.destination()) == DownloadFixture.content(Self.size))
        #expect(fixture.leftovers() == ["file.bin"])

        let served = try await fixture.served()
        let parts: [String?] = [nil, "bytes=100000-", "bytes=164000-", "bytes=228000-", "bytes=292000-"]
        #expect(served.map(\.range) == parts + (chunked ? ["bytes=300000-"] : []))
        #expect(served.map(\.status) == [200, 206, 206, 206, 206] + (chunked ? [416] : []))
        #expect(served.map(\.bytesSent) == [100_000, 64000, 64000, 64000, 8000] + (chunked ? [0] : []))
        #expect(served.dropFirst().allSatisfy { $0.ifRange == "\"m300000-v0\"" })
    }
}
