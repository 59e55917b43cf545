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
        #expect(streamed.response.body.isEmpty)
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
        head.streamedBody = HTTPBody(chunks)
        let transport = StubTransport(responses: [.success(head)])
        let streamed = try await client(transport).stream(Request<Data>.get("/feed"))
        struct Number: Decodable { var n: Int }
        var numbers: [Int] = []
        for try await value in streamed.body.ndjson(as: Number.self) { numbers.append(value.n) }
        #expect(numbers == [1, 2])
    }
}
