import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// Resumed downloads answered with parts that do not prove the file whole: `Content-Range: bytes
/// a-b/*` (complete length unknown, RFC 9110 §14.4), a body shorter or longer than its
/// `Content-Range`, a range that does not start where the client asked. The stub is the server:
/// its recorded requests are what the server saw.
@Suite("Downloads: 206 parts of unknown length or the wrong size")
struct DownloadPartBoundsTests {
    /// The representation: 20 bytes.
    static let whole = Data("ABCDEFGHIJKLMNOPQRST".utf8)
    static let tag = #""u1""#

    /// How the server says where the representation ends, once asked past the last part.
    enum End: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// `416` with `Content-Range: bytes */20` to a Range from byte 20.
        case unsatisfiable
        /// The last part carries its complete length: `bytes 15-19/20`.
        case lastPartKnown
        var testDescription: String { rawValue }
    }

    struct Folder {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dlparts-\(UUID().uuidString)")
        var destination: URL { root.appendingPathComponent("file.bin") }

        init() throws { try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true) }

        /// Resume data holding the first `held` bytes of ``whole``, tagged ``tag``.
        func resume(held: Int, expectedLength: Int64? = nil) throws -> DownloadResumeData {
            let partials = root.appendingPathComponent(PartialDownloadFile.folderName, isDirectory: true)
            try FileManager.default.createDirectory(at: partials, withIntermediateDirectories: true)
            let partial = partials.appendingPathComponent("held.partial")
            try DownloadPartBoundsTests.whole.prefix(held).write(to: partial)
            return DownloadResumeData(
                url: TransfersFixture.baseURL.appendingPathComponent("live/7"), offset: Int64(held),
                validator: DownloadPartBoundsTests.tag, expectedLength: expectedLength, partialFileURL: partial)
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    /// The `N` of the request's `Range: bytes=N-`; `nil` without `Range`.
    static func rangeStart(_ request: URLRequest) -> Int? {
        guard let range = request.value(forHTTPHeaderField: "Range") else { return nil }
        guard range.hasPrefix("bytes="), range.hasSuffix("-") else { return -1 }
        return Int(range.dropFirst(6).dropLast()) ?? -1
    }

    /// A `206` with `Content-Range: bytes first-last/complete` and `body` as sent (which may
    /// disagree with the range).
    static func part(first: Int, last: Int, complete: String, body: Data) -> HTTPResponse {
        HTTPResponse(
            statusCode: 206,
            headers: ["Content-Range": "bytes \(first)-\(last)/\(complete)", "Content-Length": "\(body.count)", "ETag": tag],
            body: body)
    }

    static var wholeResponse: HTTPResponse {
        HTTPResponse(statusCode: 200, headers: ["Content-Length": "\(whole.count)", "ETag": tag], body: whole)
    }

    static func ranges(_ transport: StubTransport) -> [String] {
        transport.requests.map { $0.value(forHTTPHeaderField: "Range") ?? "none" }
    }

    static func get(_ retries: Int = 0) -> Request<Void> {
        Request<Void>.get(
            "/live/7", policy: .standard.with(\.retry, RetryPolicy(maxRetries: retries, baseDelay: .zero, maxDelay: .zero)))
    }

    /// A server that caps every answer at `part` bytes and never says the complete length until
    /// asked past the end (or in the last part).
    @Test(
        "a resumed download answered with parts of unknown length asks on from the byte after each until the server says where the file ends",
        arguments: End.allCases, [1, 4, 7, 15, 40])
    func unknownLengthPartsAreFollowedToTheEnd(end: End, part: Int) async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let whole = Self.whole
        let transport = StubTransport { request in
            guard let first = Self.rangeStart(request) else { return Self.wholeResponse }
            if first >= whole.count {
                return HTTPResponse(statusCode: 416, headers: ["Content-Range": "bytes */\(whole.count)"], body: Data())
            }
            let last = min(first + part, whole.count) - 1
            let known = end == .lastPartKnown && last == whole.count - 1
            return Self.part(
                first: first, last: last, complete: known ? "\(whole.count)" : "*", body: whole.subdata(in: first..<(last + 1)))
        }
        let result = await TransfersFixture.client(transport)
            .download(Self.get(), to: folder.destination, resumingFrom: try folder.resume(held: 5)).result
        #expect(throws: Never.self) { try result.get() }
        #expect(try Data(contentsOf: folder.destination) == whole)
        var expected = Array(stride(from: 5, to: whole.count, by: part).map { "bytes=\($0)-" })
        if end == .unsatisfiable { expected.append("bytes=20-") }
        #expect(Self.ranges(transport) == expected)
    }

    /// Before: the first `206 bytes 5-9/*` ended the download with 10 of the 20 bytes, reported
    /// as a success.
    @Test("a single 206 of unknown length is never taken for the end of the file")
    func oneUnknownLengthPartIsNotTheFile() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let whole = Self.whole
        let transport = StubTransport { request in
            switch Self.rangeStart(request) {
            case 5?: return Self.part(first: 5, last: 9, complete: "*", body: whole.subdata(in: 5..<10))
            case 10?: return Self.part(first: 10, last: 19, complete: "20", body: whole.subdata(in: 10..<20))
            default: return HTTPResponse(statusCode: 500, body: Data())
            }
        }
        let result = await TransfersFixture.client(transport)
            .download(Self.get(), to: folder.destination, resumingFrom: try folder.resume(held: 5)).result
        #expect(throws: Never.self) { try result.get() }
        #expect(try Data(contentsOf: folder.destination) == whole)
        #expect(Self.ranges(transport) == ["bytes=5-", "bytes=10-"])
    }

    @Test(
        "after parts of unknown length, a 416 for another length than the bytes held or a 200 starts over with the whole file",
        arguments: ["416 */25", "416 */15", "416 none", "200"])
    func anEndThatDoesNotMatchStartsOver(answer: String) async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let whole = Self.whole
        let transport = StubTransport { request in
            guard let first = Self.rangeStart(request) else { return Self.wholeResponse }
            if first < whole.count {
                return Self.part(first: first, last: whole.count - 1, complete: "*", body: whole.subdata(in: first..<whole.count))
            }
            switch answer {
            case "416 */25": return HTTPResponse(statusCode: 416, headers: ["Content-Range": "bytes */25"], body: Data())
            case "416 */15": return HTTPResponse(statusCode: 416, headers: ["Content-Range": "bytes */15"], body: Data())
            case "416 none": return HTTPResponse(statusCode: 416, body: Data())
            default: return Self.wholeResponse
            }
        }
        let result = await TransfersFixture.client(transport)
            .download(Self.get(), to: folder.destination, resumingFrom: try folder.resume(held: 5)).result
        #expect(throws: Never.self) { try result.get() }
        #expect(try Data(contentsOf: folder.destination) == whole)
        // A 200 is the whole file already; a 416 that is not the end asks for it.
        #expect(Self.ranges(transport) == (answer == "200" ? ["bytes=5-", "bytes=20-"] : ["bytes=5-", "bytes=20-", "none"]))
    }

    /// A server that closes early: `bytes 5-14/…` with 3 bytes and a clean end.
    @Test(
        "a 206 whose body stops short of its Content-Range is a lost connection: continued from the last byte received",
        arguments: ["*", "20"])
    func aShortPartIsContinued(complete: String) async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let whole = Self.whole
        let transport = StubTransport { request in
            switch Self.rangeStart(request) {
            case 5?: return Self.part(first: 5, last: 14, complete: complete, body: whole.subdata(in: 5..<8))
            case 8?: return Self.part(first: 8, last: 19, complete: complete, body: whole.subdata(in: 8..<20))
            case 20?: return HTTPResponse(statusCode: 416, headers: ["Content-Range": "bytes */20"], body: Data())
            default: return HTTPResponse(statusCode: 500, body: Data())
            }
        }
        let result = await TransfersFixture.client(transport)
            .download(Self.get(2), to: folder.destination, resumingFrom: try folder.resume(held: 5)).result
        #expect(throws: Never.self) { try result.get() }
        #expect(try Data(contentsOf: folder.destination) == whole)
        #expect(Self.ranges(transport) == (complete == "*" ? ["bytes=5-", "bytes=8-", "bytes=20-"] : ["bytes=5-", "bytes=8-"]))
    }

    @Test("a 206 whose body stops short of its Content-Range, with no retry left, fails with resume data from the bytes received")
    func aShortPartWithoutRetriesFailsResumable() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let whole = Self.whole
        let transport = StubTransport { _ in Self.part(first: 5, last: 14, complete: "*", body: whole.subdata(in: 5..<8)) }
        let result = await TransfersFixture.client(transport)
            .download(Self.get(0), to: folder.destination, resumingFrom: try folder.resume(held: 5)).result
        let error = try #require(throws: DownloadError.self) { try result.get() }
        guard case .network(.transport(let lost)) = error.reason else {
            Issue.record("failed with \(error)")
            return
        }
        #expect(lost.code == .networkConnectionLost)
        let resume = try #require(error.resumeData)
        #expect(resume.offset == 8)
        #expect(try Data(contentsOf: resume.partialFileURL) == whole.prefix(8))
        #expect(!FileManager.default.fileExists(atPath: folder.destination.path))
        #expect(transport.requestCount == 1)
    }

    /// `bytes 5-9/…` with 8 bytes: bytes 10–12 would be taken for the start of the next part.
    @Test("a 206 whose body runs past its Content-Range fails and nothing of it becomes the file", arguments: ["*", "20"])
    func aLongPartFails(complete: String) async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let whole = Self.whole
        let transport = StubTransport { request in
            Self.rangeStart(request) == 5
                ? Self.part(first: 5, last: 9, complete: complete, body: Data("XXXXXXXX".utf8))
                : Self.part(first: 13, last: 19, complete: complete, body: whole.subdata(in: 13..<20))
        }
        let result = await TransfersFixture.client(transport)
            .download(Self.get(2), to: folder.destination, resumingFrom: try folder.resume(held: 5)).result
        let error = try #require(throws: DownloadError.self) { try result.get() }
        #expect(error.reason == .lengthMismatch(expected: 10, received: 13))
        #expect(error.resumeData == nil)
        #expect(!FileManager.default.fileExists(atPath: folder.destination.path))
        #expect(Self.ranges(transport) == ["bytes=5-"])
    }

    /// `bytes 3-…` overlaps the 5 bytes held, `bytes 7-…` leaves a gap: neither continues them.
    @Test(
        "a 206 that does not start at the offset asked discards the partial data and fetches the whole file",
        arguments: [3, 7, 0], ["*", "20"])
    func aPartFromAnotherOffsetStartsOver(first: Int, complete: String) async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let whole = Self.whole
        let transport = StubTransport { request in
            guard Self.rangeStart(request) != nil else { return Self.wholeResponse }
            return Self.part(first: first, last: 19, complete: complete, body: whole.subdata(in: first..<20))
        }
        let result = await TransfersFixture.client(transport)
            .download(Self.get(), to: folder.destination, resumingFrom: try folder.resume(held: 5)).result
        #expect(throws: Never.self) { try result.get() }
        #expect(try Data(contentsOf: folder.destination) == whole)
        #expect(Self.ranges(transport) == ["bytes=5-", "none"])
    }

    /// Resume data (or an earlier response) says 20 bytes: a `/*` part of the same validator is
    /// of the same representation.
    @Test(
        "a 206 of unknown length for a representation of known length ends at that length, and one beyond it starts over",
        arguments: [19, 24])
    func aKnownLengthEndsUnknownLengthParts(last: Int) async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let whole = Self.whole
        let transport = StubTransport { request in
            guard Self.rangeStart(request) != nil else { return Self.wholeResponse }
            let body = whole.subdata(in: 5..<20) + Data(repeating: UInt8(ascii: "?"), count: last - 19)
            return Self.part(first: 5, last: last, complete: "*", body: body)
        }
        let result = await TransfersFixture.client(transport)
            .download(Self.get(), to: folder.destination, resumingFrom: try folder.resume(held: 5, expectedLength: 20)).result
        #expect(throws: Never.self) { try result.get() }
        #expect(try Data(contentsOf: folder.destination) == whole)
        #expect(Self.ranges(transport) == (last == 19 ? ["bytes=5-"] : ["bytes=5-", "none"]))
    }

    /// Parts of 5 bytes, each with the `Content-Digest` of its bytes (RFC 9530 §2); one of them
    /// (`bad`, by its first byte) with the digest of other bytes. Before, only the last part's
    /// digest was checked.
    @Test(
        "every 206 part's Content-Digest is checked, not only the last one's", arguments: [nil, 5, 10, 15] as [Int?], ["*", "20"])
    func everyPartsContentDigestIsChecked(bad: Int?, complete: String) async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let whole = Self.whole
        let transport = StubTransport { request in
            guard let first = Self.rangeStart(request), first < whole.count else {
                return HTTPResponse(statusCode: 416, headers: ["Content-Range": "bytes */20"], body: Data())
            }
            let body = whole.subdata(in: first..<min(first + 5, whole.count))
            var response = Self.part(first: first, last: first + body.count - 1, complete: complete, body: body)
            let digested = first == bad ? Data("other".utf8) : body
            response.headers.replace("Content-Digest", with: "sha-256=:\(Data(SHA256.hash(digested)).base64EncodedString()):")
            return response
        }
        let result = await TransfersFixture.client(transport)
            .download(Self.get(), to: folder.destination, resumingFrom: try folder.resume(held: 5)).result
        guard let bad else {
            #expect(throws: Never.self) { try result.get() }
            #expect(try Data(contentsOf: folder.destination) == whole)
            return
        }
        let error = try #require(throws: DownloadError.self) { try result.get() }
        guard case .digestMismatch(let field, _, _) = error.reason else {
            Issue.record("failed with \(error)")
            return
        }
        #expect(field == "Content-Digest")
        #expect(!FileManager.default.fileExists(atPath: folder.destination.path))
        #expect(Self.ranges(transport).last == "bytes=\(bad)-", "the download went on after the part with the wrong digest")
    }

    /// A server that streams 1-byte `/*` parts of a representation with no end.
    @Test("parts of unknown length that never end fail the download after a bounded number of requests, keeping the bytes")
    func endlessUnknownLengthPartsAreBounded() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let transport = StubTransport { request in
            let first = Self.rangeStart(request) ?? 0
            return Self.part(first: first, last: first, complete: "*", body: Data([UInt8(first % 251)]))
        }
        let result = await TransfersFixture.client(transport)
            .download(Self.get(), to: folder.destination, resumingFrom: try folder.resume(held: 5)).result
        let error = try #require(throws: DownloadError.self) { try result.get() }
        let limit = Downloader<Request<Void>>.maxUnknownLengthParts
        guard case .network(.transport(let failure)) = error.reason else {
            Issue.record("failed with \(error)")
            return
        }
        #expect(failure.code == .badServerResponse)
        #expect(transport.requestCount == limit)
        #expect(error.resumeData?.offset == Int64(5 + limit))
        #expect(!FileManager.default.fileExists(atPath: folder.destination.path))
    }
}
