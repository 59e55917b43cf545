import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

@Suite("Uploads against the reference server: progress, bodies, retries")
struct UploadIntegrationTests {
    static func count(_ body: RequestBody, query: Query = Query()) -> Request<CountedUpload> {
        Request<CountedUpload>(method: .post, path: "/uploads/count", query: query, body: body, policy: UploadFixtures.policy) {
            response, _ in try JSONDecoder().decode(CountedUpload.self, from: response.data)
        }
    }

    @Test("a file upload is streamed from disk: the server gets every byte, progress rises monotonically and ends at the total")
    func fileUploadWithProgress() async throws {
        let (client, _) = try UploadFixtures.client()
        let data = UploadFixtures.bytes(256 << 10)
        let url = try UploadFixtures.file(data)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let upload = client.upload(Self.count(.file(url, contentType: "application/octet-stream")))
        let progress = collect(upload.progress)
        let result = try await upload.value
        let values = await progress.value
        #expect(result.bytes == data.count)
        #expect(result.sha256 == UploadFixtures.sha256(data))
        #expect(!values.isEmpty)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
        #expect(values.allSatisfy { $0.totalBytes == Int64(data.count) })
        #expect(values.last == TransferProgress(completedBytes: Int64(data.count), totalBytes: Int64(data.count)))
        #expect(values.last?.fractionCompleted == 1)
    }

    @Test("an in-memory Data upload reports progress ending at its size")
    func dataUploadWithProgress() async throws {
        let (client, _) = try UploadFixtures.client()
        let data = UploadFixtures.bytes(256 << 10, seed: 3)
        let upload = client.upload(Self.count(.data(data, contentType: "application/octet-stream")))
        let progress = collect(upload.progress)
        let result = try await upload.value
        let values = await progress.value
        #expect(result.sha256 == UploadFixtures.sha256(data))
        #expect(result.contentLength == String(data.count))
        #expect(zip(values, values.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
        #expect(values.last?.completedBytes == Int64(data.count))
    }

    @Test("a retried file upload re-reads the file from the start: every attempt delivers all bytes")
    func retriedFileUploadRereadsTheFile() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let data = UploadFixtures.bytes(256 << 10, seed: 11)
        let url = try UploadFixtures.file(data)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let upload = client.upload(Self.count(.file(url), query: ["fail": "2"]))
        let progress = collect(upload.progress)
        let result = try await upload.value
        let values = await progress.value
        #expect(result.attempt == 3)
        #expect(result.sha256 == UploadFixtures.sha256(data))
        let stats = try await TestServers.stats(namespace: namespace)
        let uploads = try #require(stats["uploads"] as? [String: Any])
        #expect(uploads["perAttempt"] as? [Int] == [data.count, data.count, data.count])
        // The re-sends start from byte 0; the published progress never goes back.
        #expect(zip(values, values.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
        #expect(values.last?.completedBytes == Int64(data.count))
    }

    @Test("a multiple-iteration MessageBody is sent as a request body; a single-use one is sent once and never retried")
    func httpBodyUploads() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let chunks = (0..<8).map { UploadFixtures.bytes(40_000, seed: $0) }
        let whole = chunks.reduce(Data(), +)
        let replayable = MessageBody(Chunks(chunks: chunks), length: .known(Int64(whole.count)), iterationBehavior: .multiple)
        let first = try await client.send(
            Self.count(.stream(BodyStream(replayable), contentType: "application/octet-stream"), query: ["fail": "1"]))
        #expect(first.sha256 == UploadFixtures.sha256(whole))
        #expect(first.attempt == 2)

        let single = MessageBody(Chunks(chunks: chunks), length: .unknown, iterationBehavior: .single)
        await #expect(throws: NetworkError.self) {
            _ = try await client.send(
                Self.count(.stream(BodyStream(single), contentType: "application/octet-stream"), query: ["fail": "3"]))
        }
        let stats = try await TestServers.stats(namespace: namespace)
        let uploads = try #require(stats["uploads"] as? [String: Any])
        // 2 attempts for the replayable body, exactly 1 for the single-use one (its 503 is returned).
        #expect(uploads["perAttempt"] as? [Int] == [whole.count, whole.count, whole.count])
    }

    @Test("cancelling an upload stops it: the response throws cancelled and progress finishes")
    func cancelledUpload() async throws {
        let (client, _) = try UploadFixtures.client()
        // The server reads 256 KiB a second (its longest pause per chunk) and answers only once
        // its gate opens, which nobody opens: the cancel comes first however late this task runs
        // after the first progress (slow reads alone left 16 s, and a loaded machine let the
        // upload finish first: 2 of 6 curl runs). A working cancel ends the test at once.
        let data = UploadFixtures.bytes(4 << 20)
        let url = try UploadFixtures.file(data)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let upload = client.upload(Self.count(.file(url), query: ["delay": "1", "gate": "answer"]))
        var iterator = upload.progress.makeAsyncIterator()
        _ = await iterator.next()
        upload.cancel()
        await #expect(throws: NetworkError.cancelled) { _ = try await upload.value }
        while await iterator.next() != nil {}
    }
}

/// An async sequence of fixed chunks, iterable many times.
struct Chunks: AsyncSequence, Sendable {
    typealias Element = Data
    let chunks: [Data]
    struct AsyncIterator: AsyncIteratorProtocol {
        var rest: ArraySlice<Data>
        mutating func next() async -> Data? { rest.popFirst() }
    }
    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(rest: chunks[...]) }
}
