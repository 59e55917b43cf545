import Foundation
import Testing
import CourierTesting
@testable import Courier

@Suite("Streamed calls through the pipeline (stub transport)")
struct StreamedCallTests {
    private func client(_ transport: StubTransport, validators: [any ResponseValidator] = []) -> APIClient {
        APIClient(environment: APIEnvironment(name: "stub", baseURL: URL(string: "https://api.example.com")!)) {
            $0.transport = transport
            $0.interceptors = .standard(retry: RetryInterceptor(clock: TestClock()))
            $0.validators = validators
        }
    }

    @Test("a 500 before the stream is a typed error with the body snippet, never fed to the consumer")
    func serverErrorBeforeStream() async throws {
        let failure = HTTPResponse(statusCode: 500, body: Data(#"{"error":{"code":"down","message":"export broken"}}"#.utf8))
        let transport = StubTransport(responses: Array(repeating: .success(failure), count: 3))
        let client = client(transport)
        do {
            _ = try await client.stream(Request<Data>.get("/export"))
            Issue.record("expected an error")
        } catch let error as NetworkError {
            #expect(error.kind == .server)
            #expect(error.failedResponse?.snippet.contains("export broken") == true)
        }
    }

    @Test("a 503 before the head is retried like a buffered call; the consumer sees only the 200's bytes")
    func retriedBeforeHead() async throws {
        let transport = StubTransport(responses: [
            .success(HTTPResponse(statusCode: 503, body: Data("busy".utf8))),
            .success(HTTPResponse(statusCode: 200, body: Data("line 1\nline 2\n".utf8))),
        ])
        let streamed = try await client(transport).stream(Request<Data>.get("/feed"))
        var lines: [String] = []
        for try await line in streamed.body.lines() { lines.append(line) }
        #expect(lines == ["line 1", "line 2"])
        #expect(streamed.context.attempt == 2)
        #expect(transport.requestCount == 2)
        // A stub's body stays in memory (one body value: the same bytes the consumer read).
        #expect(streamed.response.data == Data("line 1\nline 2\n".utf8))
    }

    struct RejectEverything: ResponseValidator {
        func validate(_ response: HTTPResponse, context: RequestContext) throws {
            throw URLError(.cannotDecodeContentData)
        }
    }

    @Test("validators, which read whole bodies, are not run on a streamed body")
    func validatorsSkipped() async throws {
        let transport = StubTransport(responses: [.success(HTTPResponse(statusCode: 200, body: Data("x".utf8)))])
        let streamed = try await client(transport, validators: [RejectEverything()]).stream(Request<Data>.get("/feed"))
        #expect(try await streamed.body.collect(upTo: 10) == Data("x".utf8))
    }
}

extension StreamedCallTests {
    @Test("a stub can script the chunks of a streamed body (split anywhere, e.g. inside a CRLF)")
    func stubScriptsChunks() async throws {
        let chunks = AsyncStream<Data> { continuation in
            for part in ["{\"n\":1}\r", "\n{\"n\"", ":2}\n"] { continuation.yield(Data(part.utf8)) }
            continuation.finish()
        }
        var head = HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/x-ndjson"])
        head.body = MessageBody(chunks)
        let transport = StubTransport(responses: [.success(head)])
        let streamed = try await client(transport).stream(Request<Data>.get("/feed"))
        struct Number: Decodable { var n: Int }
        var numbers: [Int] = []
        for try await value in streamed.body.ndjson(as: Number.self) { numbers.append(value.n) }
        #expect(numbers == [1, 2])
    }
}

extension StreamedCallTests {
    private func cachingClient(_ transport: StubTransport, cache: HTTPCache) -> APIClient {
        APIClient(environment: APIEnvironment(name: "stub", baseURL: URL(string: "https://api.example.com")!)) {
            $0.transport = transport
            $0.interceptors = .standard(cache: cache, retry: RetryInterceptor(clock: TestClock()))
        }
    }

    private func streamedResponse(_ parts: [String], maxAge: Int = 60) -> HTTPResponse {
        let chunks = AsyncStream<Data> { continuation in
            for part in parts { continuation.yield(Data(part.utf8)) }
            continuation.finish()
        }
        var head = HTTPResponse(statusCode: 200, headers: ["Cache-Control": "max-age=\(maxAge)", "Content-Type": "text/plain"])
        head.body = MessageBody(chunks)
        return head
    }

    @Test("the cache stores a streamed response read to the end (teed, not buffered ahead) and serves it next time")
    func cacheTeesAStreamReadToTheEnd() async throws {
        let transport = StubTransport(responses: [.success(streamedResponse(["ab", "cd"]))])
        let client = cachingClient(transport, cache: HTTPCache(storage: MemoryCacheStorage()))
        let first = try await client.stream(Request<Data>.get("/feed"))
        #expect(try await first.body.collect(upTo: 100) == Data("abcd".utf8))
        let second = try await client.stream(Request<Data>.get("/feed"))
        #expect(try await second.body.collect(upTo: 100) == Data("abcd".utf8))
        #expect(second.context.cacheOutcome == .hit)
        #expect(transport.requestCount == 1)
    }

    @Test("a streamed response longer than the cache's entry limit, or abandoned, is not stored")
    func cacheSkipsLongOrAbandonedStreams() async throws {
        var configuration = HTTPCache.Configuration()
        configuration.maxEntryBytes = 3
        let transport = StubTransport(responses: [
            .success(streamedResponse(["ab", "cd"])), .success(streamedResponse(["x", "y"])),
            .success(streamedResponse(["z"])),
        ])
        let client = cachingClient(transport, cache: HTTPCache(storage: MemoryCacheStorage(), configuration: configuration))
        #expect(try await client.stream(Request<Data>.get("/long")).body.collect(upTo: 100).count == 4)
        var abandoned = try await client.stream(Request<Data>.get("/long")).body.makeAsyncIterator()
        #expect(try await abandoned.next() == Data("x".utf8))
        #expect(try await client.stream(Request<Data>.get("/long")).body.collect(upTo: 100) == Data("z".utf8))
        #expect(transport.requestCount == 3)
    }
}

extension StreamedCallTests {
    @Test("maxDuration ends the body even when the caller did not keep the client")
    func maxDurationOutlivesTheClient() async throws {
        let buffer = StreamBuffer(limit: 1 << 20, pausesProducer: true) {}
        var head = HTTPResponse(statusCode: 200)
        head.body = MessageBody(buffer: buffer, length: .unknown)
        let clock = TestClock(mode: .manual)
        let body = try await APIClient(
            environment: APIEnvironment(name: "stub", baseURL: URL(string: "https://api.example.com")!)
        ) {
            $0.transport = StubTransport(responses: [.success(head)])
            $0.clock = clock
        }.stream(Request<Data>.get("/feed"), options: StreamingOptions(maxDuration: .seconds(5))).body
        let reader = Task { try await body.collect(upTo: 10) }
        // Any sleeper will do: the limit (5 s less the real time the call took, so no exact
        // instant to wait for) was registered before `stream` returned, and replaced the timer
        // of the call's 60 s deadline; whenever its sleep begins, advancing by 5 s reaches it.
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(5))
        await #expect(throws: NetworkError.timedOut(nil)) { try await reader.value }
    }
}
