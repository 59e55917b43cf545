import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTesting
import CourierTransfers
import Testing

/// Streamed bodies of known length (a file, a factory with a length, a streamed multipart form)
/// go out with `Content-Length` over `CurlTransport`; URLSession on Linux sends them chunked.
@Suite("Uploads: bodies of known length")
struct KnownLengthBodyTests {
    typealias Arrival = ResendBelowCourierTests.Arrival

    /// Sends `body` once on a fresh connection to the resend listener (answered there) and returns
    /// what the server saw.
    static func send(_ body: RequestBody) async throws -> Arrival {
        let base = try await ResendBelowCourierTests.listenerURL()
        let client = APIClient(environment: APIEnvironment(name: "length", baseURL: base)) { configuration in
            TestTransport.configure(&configuration)
        }
        let id = UUID().uuidString
        _ = try await client.send(Request<Data>(method: .put, path: "/drop", query: ["id": id], body: body))
        let arrivals = try await ResendBelowCourierTests.arrivals(id: id)
        #expect(arrivals.count == 1)
        return try #require(arrivals.first)
    }

    @Test("file, factory and streamed multipart bodies: Content-Length on curl, exact bytes on both")
    func knownLength() async throws {
        let payload = ResendBelowCourierTests.payload
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-length-\(UUID().uuidString)")
        try payload.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        var form = MultipartForm()
        try form.addField(named: "name", value: "report")
        try form.addFile(named: "file", fileURL: file, filename: "report.bin")
        let bodies: [(String, RequestBody, Int)] = [
            ("file", .stream(.file(file), contentType: "application/octet-stream"), payload.count),
            (
                "factory",
                .stream(.factory(length: payload.count) { InputStream(data: payload) }, contentType: "application/octet-stream"),
                payload.count
            ),
            ("multipart", .multipart(form), Int(form.contentLength)),
        ]
        for (name, body, length) in bodies {
            let arrival = try await Self.send(body)
            #expect(arrival.complete && arrival.bodyBytes == length, "\(name): \(arrival)")
            if TestTransport.isCurl {
                #expect(arrival.contentLength == String(length) && !arrival.chunked, "\(name): \(arrival)")
            } else {
                #if canImport(FoundationNetworking)
                #expect(arrival.chunked && arrival.contentLength == nil, "\(name): \(arrival)")
                #else
                #expect(arrival.contentLength == String(length), "\(name): \(arrival)")
                #endif
            }
        }
    }

    /// A stream that gives more or fewer bytes than its declared length: over `CurlTransport`,
    /// which sends the length as `Content-Length`, the upload fails (more bytes than the field
    /// says would be read as the next request on a kept-alive connection; fewer would leave the
    /// server waiting); URLSession on Linux sends the stream chunked, as it came.
    @Test("a stream longer or shorter than its declared length", arguments: [1000, 3000])
    func aStreamOfAnotherLengthThanDeclared(_ declared: Int) async throws {
        let bytes = Data(repeating: 5, count: 2000)
        let base = try await ResendBelowCourierTests.listenerURL()
        let client = APIClient(environment: APIEnvironment(name: "length", baseURL: base)) { TestTransport.configure(&$0) }
        let id = UUID().uuidString
        let request = Request<Data>(
            method: .put, path: "/drop", query: ["id": id],
            body: .stream(.factory(length: declared) { InputStream(data: bytes) }, contentType: "application/octet-stream"),
            // A deadline far from the failure's time: in the whole parallel pass at a load of 12–16
            // on 2 cores the failure took 5–10 s to come back, which a 10 s deadline blurred.
            policy: .standard.with(\.retry, .none).with(\.deadline, .seconds(60)))
        let start = ContinuousClock.now
        if TestTransport.isCurl {
            let error = await #expect(throws: NetworkError.self) { try await client.send(request) }
            guard case .transport(let urlError)? = error else {
                Issue.record("expected a transport error, got \(String(describing: error))")
                return
            }
            #expect(urlError.code == .requestBodyStreamExhausted)
            #expect(ContinuousClock.now - start < .seconds(30), "failed at once, not at the deadline")
            let arrivals = try await ResendBelowCourierTests.arrivals(id: id)
            #expect(arrivals.allSatisfy { !$0.complete || $0.bodyBytes <= declared }, "\(arrivals)")
        } else {
            _ = try await client.send(request)
            let arrival = try #require(try await ResendBelowCourierTests.arrivals(id: id).first)
            #expect(arrival.chunked && arrival.bodyBytes == 2000, "\(arrival)")
        }
    }

    /// A request body whose producer waits (a live capture) ends with the call: cancelling it
    /// ends the call and stops the producer. Over `CurlTransport` only: URLSession on Linux
    /// reads every body on the one queue all its sessions share, so while this producer waits,
    /// every other URLSession call of the process (the tests running alongside) waits too — the
    /// limitation `BodyStream.init(_:)` documents.
    ///
    /// No wall-clock bound: the client's deadline runs on a `TestClock` that never moves, and the
    /// producer never yields again, so only the cancel can end the call. The proof is the
    /// server's: it read the request's head before the cancel, and saw the body cut after it,
    /// while the producer still waited. (A 3 s bound on the cancel was broken by a loaded
    /// machine: 3.85 s.)
    @Test(
        "cancelling a call whose body producer waits ends the call, cuts the body and stops the producer",
        .enabled(if: TestTransport.isCurl, "URLSession on Linux blocks its shared queue while a body producer waits"))
    func cancellingAWaitingBodyStopsItsProducer() async throws {
        let (stream, continuation) = AsyncStream<Data>.makeStream()
        let stopped = Locked(false)
        continuation.onTermination = { _ in stopped.set(true) }
        defer { continuation.finish() }
        continuation.yield(Data(repeating: 1, count: 4096))
        let base = try await ResendBelowCourierTests.listenerURL()
        let client = APIClient(environment: APIEnvironment(name: "length", baseURL: base)) {
            TestTransport.configure(&$0)
            $0.clock = TestClock(mode: .manual)
        }
        let id = UUID().uuidString
        let body = MessageBody(stream, length: .unknown, iterationBehavior: .single)
        let call = Task {
            try await client.send(
                Request<Data>(
                    method: .put, path: "/drop", query: ["id": id],
                    body: .stream(BodyStream(body), contentType: "application/octet-stream"),
                    policy: .standard.with(\.retry, .none).with(\.deadline, .seconds(30))))
        }
        // The request is on the wire (the server read its head); the producer waits.
        var heads = 0
        for _ in 0..<600 where heads == 0 {
            heads = try await Self.heads(id: id)
            if heads == 0 { try await Task.sleep(for: .milliseconds(50)) }
        }
        try #require(heads == 1, "the request never reached the server")
        call.cancel()
        let result = await Self.bounded(call)
        guard case .failure(let error as NetworkError) = result, error == .cancelled else {
            Issue.record("expected NetworkError.cancelled, got \(String(describing: result))")
            return
        }
        var arrivals: [Arrival] = []
        for _ in 0..<600 where arrivals.isEmpty {
            arrivals = try await ResendBelowCourierTests.arrivals(id: id)
            if arrivals.isEmpty { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(arrivals.count == 1 && arrivals.allSatisfy { !$0.complete }, "the server saw no cut body: \(arrivals)")
        for _ in 0..<600 where !stopped.current { try await Task.sleep(for: .milliseconds(50)) }
        #expect(stopped.current, "the body's producer still runs after the call was cancelled")
    }

    /// How many `/drop?id=` requests the resend listener read the head of.
    static func heads(id: String) async throws -> Int {
        var components = try #require(
            URLComponents(url: TestServers.apiURL().appendingPathComponent("_resend/arrivals"), resolvingAgainstBaseURL: false))
        components.queryItems = [URLQueryItem(name: "id", value: id)]
        let (data, _) = try await URLSession.shared.data(from: try #require(components.url))
        struct Reply: Decodable { var heads: Int }
        return try JSONDecoder().decode(Reply.self, from: data).heads
    }

    /// The result of `call`, or a recorded issue and the call cancelled (again) once 60 s of wall
    /// clock passed: a bound against a hang, far from any time the test measures.
    static func bounded<T: Sendable>(_ call: Task<T, any Error>) async -> Result<T, any Error>? {
        let (results, sink) = AsyncStream<Result<T, any Error>?>.makeStream()
        let waiter = Task { sink.yield(await call.result) }
        let timer = Task {
            try? await Task.sleep(for: .seconds(60))
            sink.yield(nil)
        }
        var iterator = results.makeAsyncIterator()
        let first = await iterator.next() ?? nil
        timer.cancel()
        if first == nil {
            waiter.cancel()
            Issue.record("the call did not end within 60 s of its cancel")
        }
        return first
    }

    /// A body whose producer fails mid-stream fails the call, and the server never sees a whole
    /// (truncated) body: URLSession on Linux ends a chunked body when its stream reports an error.
    @Test("a producer that fails mid-body fails the call; the server sees no complete body")
    func aFailingProducerNeverLooksComplete() async throws {
        struct Broken: Error {}
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        continuation.yield(Data(repeating: 1, count: 4096))
        continuation.finish(throwing: Broken())
        let base = try await ResendBelowCourierTests.listenerURL()
        let client = APIClient(environment: APIEnvironment(name: "length", baseURL: base)) { TestTransport.configure(&$0) }
        let id = UUID().uuidString
        let body = MessageBody(stream, length: .unknown, iterationBehavior: .single)
        await #expect(throws: NetworkError.self) {
            try await client.send(
                Request<Data>(
                    method: .put, path: "/drop", query: ["id": id],
                    body: .stream(BodyStream(body), contentType: "application/octet-stream"),
                    // A deadline far from the failure's time: in the whole parallel pass at a load of 12–16
                    // on 2 cores the failure took 5–10 s to come back, which a 10 s deadline blurred.
                    policy: .standard.with(\.retry, .none).with(\.deadline, .seconds(60))))
        }
        let arrivals = try await ResendBelowCourierTests.arrivals(id: id)
        #expect(arrivals.allSatisfy { !$0.complete }, "the server took a truncated body as whole: \(arrivals)")
    }
}
