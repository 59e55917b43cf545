import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
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
    /// returns at once and stops the producer. Over `CurlTransport` only: URLSession on Linux
    /// reads every body on the one queue all its sessions share, so while this producer waits,
    /// every other URLSession call of the process (the tests running alongside) waits too — the
    /// limitation `BodyStream.init(_:)` documents.
    @Test(
        "cancelling a call whose body producer waits returns at once and stops the producer",
        .enabled(if: TestTransport.isCurl, "URLSession on Linux blocks its shared queue while a body producer waits"))
    func cancellingAWaitingBodyStopsItsProducer() async throws {
        let (stream, continuation) = AsyncStream<Data>.makeStream()
        let stopped = Locked(false)
        continuation.onTermination = { _ in stopped.set(true) }
        continuation.yield(Data(repeating: 1, count: 4096))
        let base = try await ResendBelowCourierTests.listenerURL()
        let client = APIClient(environment: APIEnvironment(name: "length", baseURL: base)) { TestTransport.configure(&$0) }
        let body = MessageBody(stream, length: .unknown, iterationBehavior: .single)
        let call = Task {
            try await client.send(
                Request<Data>(
                    method: .put, path: "/drop", query: ["id": UUID().uuidString],
                    body: .stream(BodyStream(body), contentType: "application/octet-stream"),
                    policy: .standard.with(\.retry, .none).with(\.deadline, .seconds(30))))
        }
        try await Task.sleep(for: .milliseconds(500))  // the first chunk goes out; the producer waits
        call.cancel()
        let start = ContinuousClock.now
        await #expect(throws: NetworkError.cancelled) { _ = try await call.value }
        #expect(ContinuousClock.now - start < .seconds(3), "cancelled at once, not after the 60 s chunk wait")
        for _ in 0..<30 where !stopped.current { try await Task.sleep(for: .milliseconds(100)) }
        #expect(stopped.current, "the body's producer still runs after the call was cancelled")
        continuation.finish()
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
