import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

@Suite("multipart/form-data against the strict parser")
struct MultipartIntegrationTests {
    static func send(_ form: MultipartForm, threshold: Int = MultipartForm.defaultMemoryThreshold) -> Request<ParsedForm> {
        Request<ParsedForm>(
            method: .post, path: "/uploads/multipart", body: .multipart(form, memoryThreshold: threshold),
            policy: UploadFixtures.policy
        ) { response, _ in try JSONDecoder().decode(ParsedForm.self, from: response.data) }
    }

    @Test("fields and files arrive part by part: names, UTF-8 filenames with a quote and a backslash, per-file SHA-256")
    func strictParserAcceptsEveryPart() async throws {
        let (client, _) = try UploadFixtures.client()
        let memoryFile = UploadFixtures.bytes(70_000, seed: 1)
        // A file whose lines look like delimiters: another boundary, the close form, a prefix.
        var tricky = Data("first line\r\n--courier-notTheBoundary\r\n--\r\n----\r\n".utf8)
        tricky.append(UploadFixtures.bytes(120_000, seed: 2))
        tricky.append(Data("\r\n--courier-\r\n--courier---\r\nlast".utf8))
        let diskFile = try UploadFixtures.file(tricky, name: "disk.bin")
        defer { try? FileManager.default.removeItem(at: diskFile.deletingLastPathComponent()) }
        let names = ["naïve 日本 photo.jpg", "say \"cheese\".txt", "back\\slash.txt"]

        var form = MultipartForm()
        try form.addField(named: "title", value: "Größe — ünïcødé")
        try form.addFile(named: "photo", data: memoryFile, filename: names[0], contentType: "image/jpeg")
        try form.addFile(named: "quoted \"field\"", fileURL: diskFile, filename: names[1], contentType: "text/plain")
        try form.addFile(named: "empty", data: Data(), filename: names[2])
        let parsed = try await client.send(Self.send(form))

        #expect(parsed.boundary == form.boundary)
        #if canImport(FoundationNetworking)
        // URLSession on Linux sends every stream chunked; only the in-memory form has a length
        // there. CurlTransport sends the streamed form's length.
        #expect(parsed.contentLength == (TestTransport.isCurl ? String(form.contentLength) : nil))
        #else
        #expect(parsed.contentLength == String(form.contentLength))
        #endif
        #expect(parsed.bytes == Int(form.contentLength))
        #expect(parsed.parts.map(\.name) == ["title", "photo", "quoted \"field\"", "empty"])
        #expect(parsed.parts.map(\.filenameHex) == [nil] + names.map { UploadFixtures.hex($0) })
        #expect(parsed.parts[0].sha256 == UploadFixtures.sha256(Data("Größe — ünïcødé".utf8)))
        #expect(parsed.parts[0].contentType == nil)
        #expect(parsed.parts[1].sha256 == UploadFixtures.sha256(memoryFile))
        #expect(parsed.parts[1].contentType == "image/jpeg")
        #expect(parsed.parts[2].sha256 == UploadFixtures.sha256(tricky))
        #expect(parsed.parts[2].length == tricky.count)
        #expect(parsed.parts[3].length == 0)
        #expect(
            parsed.parts[2].headers.first?[1]
                == #"form-data; name="quoted \"field\""; filename="say \"cheese\".txt""#)
    }

    @Test("a small in-memory form goes as Data with its Content-Length; a larger one is streamed", arguments: [true, false])
    func inMemoryForm(small: Bool) async throws {
        let (client, _) = try UploadFixtures.client()
        let data = UploadFixtures.bytes(100_000, seed: 8)
        var form = MultipartForm()
        try form.addField(named: "a", value: "1")
        try form.addFile(named: "f", data: data, filename: "f.bin")
        let parsed = try await client.send(Self.send(form, threshold: small ? 1 << 20 : 1000))
        #expect(parsed.parts.map(\.sha256) == [UploadFixtures.sha256(Data("1".utf8)), UploadFixtures.sha256(data)])
        #expect(parsed.bytes == Int(form.contentLength))
        #if canImport(FoundationNetworking)
        #expect(parsed.contentLength == (small || TestTransport.isCurl ? String(form.contentLength) : nil))
        #else
        #expect(parsed.contentLength == String(form.contentLength))
        #endif
    }

    @Test("a streamed form is re-read from its files for a retry")
    func streamedFormIsRereadForRetry() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let data = UploadFixtures.bytes(100_000, seed: 5)
        let file = try UploadFixtures.file(data)
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        var form = MultipartForm()
        try form.addFile(named: "file", fileURL: file)
        // /uploads/count?fail=1 counts raw bytes; every attempt must carry the whole body.
        let request = Request<CountedUpload>(
            method: .post, path: "/uploads/count", query: ["fail": "1"], body: .multipart(form), policy: UploadFixtures.policy
        ) { response, _ in try JSONDecoder().decode(CountedUpload.self, from: response.data) }
        let result = try await client.send(request)
        #expect(result.attempt == 2)
        #expect(result.bytes == Int(form.contentLength))
        #expect(result.sha256 == UploadFixtures.sha256(try form.encodedData()))
        let stats = try await TestServers.stats(namespace: namespace)
        #expect(
            (stats["uploads"] as? [String: Any])?["perAttempt"] as? [Int] == [Int(form.contentLength), Int(form.contentLength)])
    }
}
