import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
@testable import CourierTransfers

@Suite("multipart/form-data encoding (RFC 7578)")
struct MultipartFormTests {
    struct Photo: Decodable, Sendable { var id: Int }

    @Test("a multipart form goes through the RequestBody form of Request.post")
    func requestBody() throws {
        var form = MultipartForm()
        try form.addField(named: "caption", value: "Sunset")
        let request = Request<Photo>.post("/photos", body: .multipart(form))
        guard case .data(_, let contentType) = request.body else {
            Issue.record("expected an in-memory multipart body, got \(request.body)")
            return
        }
        #expect(contentType.hasPrefix("multipart/form-data; boundary="))
    }

    @Test(
        "exact bytes: --boundary CRLF first, CRLF before every later delimiter, close delimiter and CRLF last; Content-Length matches"
    )
    func exactEncoding() throws {
        var form = try MultipartForm(boundary: "b0undary")
        try form.addField(named: "a", value: "1")
        try form.addFile(named: "f", data: Data("x\r\ny".utf8), filename: "n.txt", contentType: "text/plain")
        let expected =
            "--b0undary\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1"
            + "\r\n--b0undary\r\nContent-Disposition: form-data; name=\"f\"; filename=\"n.txt\"\r\nContent-Type: text/plain\r\n\r\nx\r\ny"
            + "\r\n--b0undary--\r\n"
        let data = try form.encodedData()
        #expect(String(decoding: data, as: UTF8.self) == expected)
        #expect(form.contentLength == Int64(data.count))
        #expect(form.contentType == "multipart/form-data; boundary=b0undary")
    }

    @Test("a body written to a file is readable by its owner alone, also over an older file")
    func aWrittenBodyIsReadableByItsOwnerAlone() throws {
        var form = try MultipartForm(boundary: "b0undary")
        try form.addField(named: "password", value: "pw-multipart-private")
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let fresh = folder.appendingPathComponent("body")
        let replaced = folder.appendingPathComponent("older")
        #expect(FileManager.default.createFile(atPath: replaced.path, contents: Data("old".utf8)))
        for url in [fresh, replaced] {
            try form.writeBody(to: url)
            #expect(try Data(contentsOf: url) == form.encodedData())
            let mode = try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? NSNumber
            #expect(mode?.intValue == 0o600, "\(url.lastPathComponent): \(String(describing: mode))")
        }
    }

    @Test("quotes and backslashes are escaped, UTF-8 is kept as is, no filename*")
    func escaping() throws {
        var form = try MultipartForm(boundary: "b")
        try form.addFile(named: "we\"ird\\", data: Data(), filename: "ä \"q\" \\ 日.txt")
        let text = String(decoding: try form.encodedData(), as: UTF8.self)
        #expect(text.contains(#"name="we\"ird\\"; filename="ä \"q\" \\ 日.txt""#))
        #expect(!text.contains("filename*"))
    }

    @Test(
        "CR, LF and other control characters are refused with a typed error",
        arguments: ["a\rb", "a\nb", "a\r\nb", "a\u{0}b", "a\u{7F}"])
    func controlCharactersRefused(_ bad: String) throws {
        var form = MultipartForm()
        #expect(throws: MultipartFormError.invalidCharacter(what: "filename", value: bad)) {
            try form.addFile(named: "f", data: Data(), filename: bad)
        }
        #expect(throws: MultipartFormError.invalidCharacter(what: "field name", value: bad)) {
            try form.addField(named: bad, value: "v")
        }
        #expect(form.contentLength == Int64("--\(form.boundary)--\r\n".utf8.count))  // nothing was added
    }

    @Test("a random boundary that occurs in an in-memory part is replaced; a caller's boundary is refused")
    func boundaryCollision() throws {
        let candidates = Locked(["courier-AAA", "courier-BBB"])
        var form = MultipartForm(boundaryGenerator: { candidates.withLock { $0.removeFirst() } })
        #expect(form.boundary == "courier-AAA")
        try form.addField(named: "note", value: "line\r\n--courier-AAA\r\nlooks like a delimiter")
        #expect(form.boundary == "courier-BBB")
        #expect(!String(decoding: try form.encodedData(), as: UTF8.self).contains("courier-AAA\r\nContent"))

        var fixed = try MultipartForm(boundary: "fixed")
        #expect(throws: MultipartFormError.boundaryInContent("fixed")) { try fixed.addField(named: "x", value: "--fixed") }
    }

    @Test("random boundaries: 48 characters, distinct, valid bchars")
    func randomBoundaries() {
        let boundaries = (0..<50).map { _ in MultipartForm().boundary }
        #expect(Set(boundaries).count == 50)
        #expect(boundaries.allSatisfy { $0.count == 48 && MultipartBoundary.isValid($0) })
    }

    @Test(
        "invalid caller boundaries are refused",
        arguments: ["", String(repeating: "a", count: 71), "ends with space ", "semi;colon"])
    func invalidBoundary(_ boundary: String) {
        #expect(throws: MultipartFormError.invalidBoundary(boundary)) { _ = try MultipartForm(boundary: boundary) }
    }

    @Test("a file part is read when encoded; a file that changed size fails instead of sending a wrong length")
    func fileParts() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-mp-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(repeating: 7, count: 200_000).write(to: url)
        var form = try MultipartForm(boundary: "bb")
        try form.addFile(named: "f", fileURL: url, contentType: "application/octet-stream")
        #expect(try form.encodedData().count == Int(form.contentLength))
        try Data(repeating: 7, count: 10).write(to: url)
        #expect(throws: MultipartFormError.fileChanged(path: url.path, expected: 200_000, actual: 10)) {
            _ = try form.encodedData()
        }
        #expect(throws: MultipartFormError.unreadableFile(path: "/nonexistent/x")) {
            try form.addFile(named: "g", fileURL: URL(fileURLWithPath: "/nonexistent/x"))
        }
    }

    @Test("the streamed body (InputStream read part by part) equals the encoded bytes")
    func streamedEqualsEncoded() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-mp-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0) }).write(to: url)
        var form = MultipartForm()
        try form.addField(named: "t", value: "v")
        try form.addFile(named: "f", fileURL: url)
        try form.addFile(named: "g", data: Data(repeating: 1, count: 5000), filename: "g")
        let stream = form.makeStream()
        stream.open()
        var read = Data()
        var buffer = [UInt8](repeating: 0, count: 7000)
        for _ in 0..<1000 {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count <= 0 { break }
            read.append(contentsOf: buffer[0..<count])
        }
        stream.close()
        #expect(read == (try form.encodedData()))
    }

    @Test("RequestBody.multipart: small in-memory forms as Data, file forms as a replayable stream with the length")
    func requestBodyChoice() throws {
        var small = MultipartForm()
        try small.addField(named: "a", value: "b")
        guard case .data(let data, let type) = RequestBody.multipart(small) else {
            Issue.record("expected .data")
            return
        }
        #expect(data == (try small.encodedData()) && type == small.contentType)
        guard case .stream(let stream, _) = RequestBody.multipart(small, memoryThreshold: 1) else {
            Issue.record("expected .stream")
            return
        }
        #expect(stream.iterationBehavior == .multiple && stream.length == Int(small.contentLength))
    }
}

@Suite("Upload progress")
struct UploadProgressTests {
    @Test("never decreases across re-sends, clamps to the total and ends at the total")
    func monotoneAndFinal() async {
        let (stream, continuation) = AsyncStream.makeStream(of: TransferProgress.self)
        let tracker = UploadProgressTracker(knownTotal: 100, continuation: continuation)
        for sent: Int64 in [10, 60, 5, 30, 70, 150] { tracker.didSend(sent, of: nil) }  // a retry restarts at 5
        tracker.finish(sentTotal: nil)
        var values: [Int64] = []
        for await value in stream { values.append(value.completedBytes) }
        #expect(values == [10, 60, 70, 100])
    }

    @Test("an unknown total ends at the bytes sent; a failure ends without a final value")
    func unknownTotalAndFailure() async {
        let (stream, continuation) = AsyncStream.makeStream(of: TransferProgress.self)
        let tracker = UploadProgressTracker(knownTotal: nil, continuation: continuation)
        tracker.didSend(40, of: nil)
        tracker.finish(sentTotal: nil)
        var values: [TransferProgress] = []
        for await value in stream { values.append(value) }
        #expect(values.first == TransferProgress(completedBytes: 40, totalBytes: nil))
        #expect(values.last == TransferProgress(completedBytes: 40, totalBytes: 40))

        let (failed, failedContinuation) = AsyncStream.makeStream(of: TransferProgress.self)
        let failing = UploadProgressTracker(knownTotal: 10, continuation: failedContinuation)
        failing.didSend(3, of: 10)
        failing.fail()
        var last: TransferProgress?
        for await value in failed { last = value }
        #expect(last == TransferProgress(completedBytes: 3, totalBytes: 10))
    }
}
