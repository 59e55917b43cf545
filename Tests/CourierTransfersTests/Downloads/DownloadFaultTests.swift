import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
@testable import CourierTransfers

/// Downloads under faults: concurrent downloads into one folder, error statuses, a broken-off
/// POST, ranges a server caps, a cancel as the last bytes arrive.
@Suite("Downloads under faults")
struct DownloadFaultTests {
    static func folder(_ name: String) throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dlfault-\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// Many small downloads running at once into one folder (thumbnails into Caches/thumbs/):
    /// they share `.courier-downloads`. One that completes removes the folder when it looks
    /// empty (`removeFolderIfEmpty`: a listing, then a recursive `removeItem`), racing another
    /// that is creating its partial file there.
    @Test("concurrent downloads into one folder all succeed", .timeLimit(.minutes(2)))
    func concurrentDownloadsIntoOneFolder() async throws {
        let folder = try Self.folder("concurrent")
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = Data((0..<64).map { UInt8($0) })
        let transport = StubTransport { _ in
            HTTPResponse(statusCode: 200, headers: ["Content-Length": "64", "ETag": #""t1""#], body: body)
        }
        let client = TransfersFixture.client(transport)
        let workers = 8
        let perWorker = 100
        let failures = await withTaskGroup(of: [String].self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var failures: [String] = []
                    for index in 0..<perWorker {
                        let destination = folder.appendingPathComponent("w\(worker)-\(index).bin")
                        let result = await client.download(Request<Void>.get("/thumbs/\(worker)/\(index)"), to: destination)
                            .result
                        switch result {
                        case .success:
                            if (try? Data(contentsOf: destination)) != body {
                                failures.append("wrong bytes at \(destination.lastPathComponent)")
                            }
                        case .failure(let error): failures.append(String(describing: error))
                        }
                    }
                    return failures
                }
            }
            var all: [String] = []
            for await part in group { all += part }
            return all
        }
        #expect(failures.isEmpty, "\(failures.count) of \(workers * perWorker) failed, first: \(failures.first ?? "")")
    }

    /// A 416 is accepted by the attempt's status validation even for a request without `Range`
    /// (the first attempt, or any attempt after a restart); the rules then treat it as a whole
    /// representation and its error body becomes the downloaded file, reported as a success.
    @Test("a 416 to a request without Range is not written to the destination", .timeLimit(.minutes(1)))
    func a416WithoutRangeIsNotTheFile() async throws {
        let folder = try Self.folder("416")
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("report.pdf")
        try Data("the previous report".utf8).write(to: destination)
        let errorBody = Data(#"{"error":"range not satisfiable"}"#.utf8)
        let transport = StubTransport(responses: [
            .success(
                HTTPResponse(
                    statusCode: 416,
                    headers: ["Content-Type": "application/json", "Content-Length": "\(errorBody.count)"], body: errorBody))
        ])
        let client = TransfersFixture.client(transport)
        let result = await client.download(Request<Void>.get("/reports/7"), to: destination).result
        #expect(transport.requests.first?.value(forHTTPHeaderField: "Range") == nil)
        if case .success(let response) = result {
            Issue.record("the download succeeded with status \(response.statusCode)")
        }
        #expect(try Data(contentsOf: destination) == Data("the previous report".utf8))
    }

    /// A download through a POST (an export generated on request) whose body is lost mid-way is
    /// sent again by the downloader's own continuation loop: each attempt is a separate
    /// `client.stream` call, so `.automatic` gives it a new Idempotency-Key (and `.none` none at
    /// all) — the server sees two different POSTs. The pipeline itself never repeats such a POST.
    @Test(
        "a POST download is not re-sent with another idempotency key after a mid-body failure",
        .timeLimit(.minutes(1)), arguments: [IdempotencyPolicy.automatic, .none])
    func postDownloadIsNotResentAsANewRequest(idempotency: IdempotencyPolicy) async throws {
        let folder = try Self.folder("post")
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("export.csv")
        let whole = Data((0..<200).map { UInt8($0) })
        let count = Locked(0)
        let transport = StubTransport { _ in
            let number = count.withLock {
                $0 += 1
                return $0
            }
            if number == 1 {
                let (stream, continuation) = AsyncThrowingStream.makeStream(of: Data.self)
                continuation.yield(whole.prefix(100))
                continuation.finish(throwing: URLError(.networkConnectionLost))
                var head = HTTPResponse(statusCode: 200, headers: ["Content-Length": "200", "ETag": #""x1""#])
                head.body = MessageBody(stream, length: .known(200))
                return head
            }
            return HTTPResponse(
                statusCode: 206, headers: ["Content-Range": "bytes 100-199/200", "Content-Length": "100", "ETag": #""x1""#],
                body: whole.suffix(from: 100))
        }
        let client = TransfersFixture.client(transport) {
            $0.interceptors = [RequestIDInterceptor(), IdempotencyInterceptor(), RetryInterceptor(maximumRetries: 0)]
        }
        let policy = EndpointPolicy.standard
            .with(\.idempotency, idempotency)
            .with(\.retry, RetryPolicy(maxRetries: 2, baseDelay: .zero, maxDelay: .zero))
        let endpoint = Request<Void>.post("/exports", body: ["month": "2026-11"], policy: policy)
        _ = await client.download(endpoint, to: destination).result
        let posts = transport.requests.filter { $0.httpMethod == "POST" }
        let keys = posts.map { $0.value(forHTTPHeaderField: "Idempotency-Key") }
        #expect(
            posts.count == 1 || (keys.allSatisfy { $0 != nil } && Set(keys).count == 1),
            "\(posts.count) POSTs sent, Idempotency-Key values \(keys)")
    }

    /// A server that caps each range answer (`bytes 100-149/200` to `bytes=100-`), a
    /// complete and correct 206, is treated as a lost connection.
    @Test("a capped 206 is continued without counting as a failure", .timeLimit(.minutes(1)))
    func cappedPartialContent() async throws {
        let folder = try Self.folder("capped")
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let whole = Data((0..<200).map { UInt8($0) })
        let partial = folder.appendingPathComponent(PartialDownloadFile.folderName).appendingPathComponent("p.partial")
        try FileManager.default.createDirectory(at: partial.deletingLastPathComponent(), withIntermediateDirectories: true)
        try whole.prefix(100).write(to: partial)
        let resume = DownloadResumeData(
            url: TransfersFixture.baseURL.appendingPathComponent("media/200"), offset: 100, validator: #""v1""#,
            expectedLength: 200, partialFileURL: partial)
        let transport = StubTransport { request in
            let range = request.value(forHTTPHeaderField: "Range") ?? ""
            let first = Int(range.dropFirst(6).dropLast()) ?? 0
            let last = min(first + 49, 199)
            return HTTPResponse(
                statusCode: 206,
                headers: [
                    "Content-Range": "bytes \(first)-\(last)/200", "Content-Length": "\(last - first + 1)", "ETag": #""v1""#,
                ],
                body: whole.subdata(in: first..<(last + 1)))
        }
        let client = TransfersFixture.client(transport)
        let policy = EndpointPolicy.standard.with(\.retry, RetryPolicy(maxRetries: 0, baseDelay: .zero, maxDelay: .zero))
        let result = await client.download(Request<Void>.get("/media/200", policy: policy), to: destination, resumingFrom: resume)
            .result
        if case .failure(let error) = result {
            Issue.record("failed: \(error); requests \(transport.requests.map { $0.value(forHTTPHeaderField: "Range") ?? "-" })")
        }
        #expect((try? Data(contentsOf: destination)) == whole)
    }

    /// A transport whose body is a `StreamBuffer` (as URLSession's and CourierCurl's are): the
    /// first chunk is handed to the waiting consumer, the rest and the end arrive at once, and the
    /// download is cancelled right then (a user tapping Cancel as the last bytes come in).
    /// `StreamBuffer.cancel()` on a body that already finished drops the buffered chunks without
    /// marking it cancelled, so the consumer's next `next()` returns `nil` — a clean end. Without
    /// `Content-Length` (chunked, compressed) the downloader takes that as the whole file.
    final class EndRacingTransport: Transport, @unchecked Sendable {
        let chunks: [Data]
        let onEnd: @Sendable () -> Void
        init(chunks: [Data], onEnd: @escaping @Sendable () -> Void) {
            self.chunks = chunks
            self.onEnd = onEnd
        }
        func send(_ request: URLRequest) async throws -> HTTPResponse { throw URLError(.unsupportedURL) }
        func stream(_ request: URLRequest, options: StreamingOptions) async throws -> HTTPResponse {
            let buffer = StreamBuffer(limit: 1 << 20, pausesProducer: true) {}
            let (chunks, onEnd) = (self.chunks, self.onEnd)
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(100)) {
                for chunk in chunks { _ = buffer.append(chunk) }
                buffer.finish()
                onEnd()
            }
            var head = HTTPResponse(statusCode: 200, headers: ["Transfer-Encoding": "chunked", "ETag": #""c1""#])
            head.body = MessageBody(buffer: buffer, length: .unknown)
            return head
        }
    }

    @Test("a download cancelled as its last chunks arrive never succeeds with a truncated file", .timeLimit(.minutes(1)))
    func cancelAtTheEndDoesNotTruncate() async throws {
        let folder = try Self.folder("cancel-end")
        defer { try? FileManager.default.removeItem(at: folder) }
        let chunks = (0..<10).map { index in Data(repeating: UInt8(index), count: 1000) }
        let whole = chunks.reduce(Data(), +)
        var truncated: [Int] = []
        for round in 0..<20 {
            let destination = folder.appendingPathComponent("file-\(round).bin")
            let current = Locked<DownloadTask?>(nil)
            let transport = EndRacingTransport(chunks: chunks) { current.withLock { $0?.cancel() } }
            let client = APIClient(environment: TransfersFixture.environment) {
                $0.transport = transport
                $0.interceptors = [RequestIDInterceptor(), RetryInterceptor(maximumRetries: 0)]
            }
            let task = client.download(Request<Void>.get("/media/live"), to: destination)
            current.withLock { $0 = task }
            if case .success = await task.result {
                let bytes = try Data(contentsOf: destination)
                if bytes != whole { truncated.append(bytes.count) }
            }
        }
        #expect(truncated.isEmpty, "successes with a truncated file (bytes): \(truncated) of \(whole.count)")
    }
}

extension DownloadFaultTests {
    /// Resume data for 5 bytes of a 10-byte representation tagged `"t1"`, its partial file in `folder`.
    static func halfOfTenBytes(in folder: URL) throws -> DownloadResumeData {
        let partials = folder.appendingPathComponent(PartialDownloadFile.folderName, isDirectory: true)
        try FileManager.default.createDirectory(at: partials, withIntermediateDirectories: true)
        let partial = partials.appendingPathComponent("old.partial")
        try Data("01234".utf8).write(to: partial)
        return DownloadResumeData(
            url: TransfersFixture.baseURL.appendingPathComponent("files/7"), offset: 5, validator: #""t1""#, expectedLength: 10,
            partialFileURL: partial)
    }

    /// A server that ignores `If-Range` answers a resume of a representation that shrank to 5 bytes
    /// with `416 bytes */5` (no ETag), and the whole new file to a request without `Range`.
    @Test("a 416 for fewer bytes than the partial file's representation restarts: the old prefix is never the file")
    func a416ForAShorterRepresentationRestarts() async throws {
        let folder = try Self.folder("416-shrunk")
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let fresh = Data("abcde".utf8)
        let transport = StubTransport { request in
            if request.value(forHTTPHeaderField: "Range") != nil {
                return HTTPResponse(statusCode: 416, headers: ["Content-Range": "bytes */5"], body: Data())
            }
            return HTTPResponse(statusCode: 200, headers: ["Content-Length": "5", "ETag": #""t2""#], body: fresh)
        }
        let resume = try Self.halfOfTenBytes(in: folder)
        let result = await TransfersFixture.client(transport)
            .download(Request<Void>.get("/files/7"), to: destination, resumingFrom: resume).result
        #expect(throws: Never.self) { try result.get() }
        #expect(try Data(contentsOf: destination) == fresh, "the prefix of the old 10-byte file was placed as the file")
        #expect(transport.requests.count == 2)
    }

    /// The same entity tag for a representation of another length (a server that reuses tags).
    @Test("a 206 giving another complete length than the partial file's representation restarts: nothing is spliced")
    func a206ForAnotherCompleteLengthRestarts() async throws {
        let folder = try Self.folder("206-length")
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        let fresh = Data("ABCDEFGH".utf8)
        let transport = StubTransport { request in
            if request.value(forHTTPHeaderField: "Range") != nil {
                return HTTPResponse(
                    statusCode: 206, headers: ["Content-Range": "bytes 5-7/8", "ETag": #""t1""#, "Content-Length": "3"],
                    body: fresh.suffix(3))
            }
            return HTTPResponse(statusCode: 200, headers: ["Content-Length": "8", "ETag": #""t1""#], body: fresh)
        }
        let resume = try Self.halfOfTenBytes(in: folder)
        let result = await TransfersFixture.client(transport)
            .download(Request<Void>.get("/files/7"), to: destination, resumingFrom: resume).result
        #expect(throws: Never.self) { try result.get() }
        #expect(try Data(contentsOf: destination) == fresh, "bytes of two representations were spliced")
    }
}
