import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import CourierTesting
@testable import Courier

/// A streamed body's real size in the logs, the metrics event and the HAR exchange: counted as the
/// consumer reads it (never read ahead), reported once when it ends, fails or is let go.
@Suite("Streamed body byte counts (logs, metrics, HAR)")
struct StreamedBodyCountTests {
    /// Chunks handed out one per `next()`, counting how many were pulled, then `failure` if set.
    struct ScriptedChunks: AsyncSequence, Sendable {
        typealias Element = Data
        let chunks: [String]
        var failure: URLError?
        let pulls = Locked(0)

        func makeAsyncIterator() -> Iterator { Iterator(source: self) }

        struct Iterator: AsyncIteratorProtocol {
            let source: ScriptedChunks
            var index = 0
            mutating func next() async throws -> Data? {
                source.pulls.withLock { $0 += 1 }
                defer { index += 1 }
                if index < source.chunks.count { return Data(source.chunks[index].utf8) }
                if let failure = source.failure { throw failure }
                return nil
            }
        }
    }

    /// What one client observes.
    struct Observed {
        let client: APIClient
        let logger: CapturingNetworkLogger
        let metrics: CapturingMetricsSink
        let har: HARRecorder
    }

    private func observed(_ chunks: ScriptedChunks, status: Int = 200) throws -> Observed {
        var head = HTTPResponse(statusCode: status, headers: ["Content-Type": "text/plain"])
        head.body = MessageBody(chunks)
        let transport = StubTransport(responses: [.success(head)])
        let logger = CapturingNetworkLogger()
        let metrics = CapturingMetricsSink()
        let har = HARRecorder()
        let client = try ObservabilityFixtures.makeClient(
            transport: transport,
            interceptors: [
                RequestIDInterceptor(), LoggingInterceptor(logger: logger, recorders: [har]), MetricsInterceptor(sink: metrics),
            ])
        return Observed(client: client, logger: logger, metrics: metrics, har: har)
    }

    private func bodyEnds(_ logger: CapturingNetworkLogger) -> [NetworkLogEntry] {
        logger.entries.filter { $0.event == .bodyEnd }
    }

    @Test("the bytes the consumer read are logged, measured and recorded when the body ends")
    func realBytesAtTheEnd() async throws {
        let chunks = ScriptedChunks(chunks: ["line 1\n", "line 22\n", "x"])
        let observed = try observed(chunks)
        let streamed = try await observed.client.stream(Request<Data>.get("/export"))

        // Head only: the response entry says "streaming", nothing is counted yet, nothing read ahead.
        let head = try #require(observed.logger.entries.first { $0.event == .response })
        #expect(head.summary.contains("streaming"))
        #expect(observed.metrics.events.isEmpty)
        #expect(observed.har.exchanges.isEmpty)
        #expect(bodyEnds(observed.logger).isEmpty)
        #expect(chunks.pulls.current == 0)

        var read = 0
        for try await chunk in streamed.body { read += chunk.count }
        #expect(read == 16)

        let end = try #require(bodyEnds(observed.logger).first)
        #expect(bodyEnds(observed.logger).count == 1)
        #expect(end.summary.hasPrefix("⇤ 200 GET /export body 16 B in "))
        #expect(end.level == .info)
        #expect(end.requestID == streamed.context.requestID)
        let event = try #require(observed.metrics.events.first)
        #expect(observed.metrics.events.count == 1)
        #expect(event.responseBodyBytes == 16)
        #expect(event.responseBodyDuration != nil)
        #expect(event.errorKind == nil)
        #expect(event.statusCode == 200)
        #expect(observed.har.exchanges.count == 1)
        if case .response(let record) = observed.har.exchanges.first?.outcome {
            #expect(record.bodySize == 16)
        } else {
            Issue.record("expected a response exchange")
        }
        #expect(observed.har.archive().log.entries.first?.response.content.size == 16)
    }

    @Test("counting does not read ahead: one chunk pulled per chunk the consumer asks for")
    func noReadAhead() async throws {
        let chunks = ScriptedChunks(chunks: ["a", "bb", "ccc"])
        let observed = try observed(chunks)
        let streamed = try await observed.client.stream(Request<Data>.get("/export"))
        var iterator = streamed.body.makeAsyncIterator()
        _ = try await iterator.next()
        #expect(chunks.pulls.current == 1)
        _ = try await iterator.next()
        #expect(chunks.pulls.current == 2)
        #expect(observed.metrics.events.isEmpty)
        while try await iterator.next() != nil {}
        #expect(observed.metrics.events.first?.responseBodyBytes == 6)
    }

    @Test("a body that fails mid-way reports the bytes read before the failure and its error kind")
    func failureMidBody() async throws {
        let chunks = ScriptedChunks(chunks: ["12345", "678"], failure: URLError(.networkConnectionLost))
        let observed = try observed(chunks)
        let streamed = try await observed.client.stream(Request<Data>.get("/export"))
        var read = 0
        await #expect(throws: (any Error).self) {
            for try await chunk in streamed.body { read += chunk.count }
        }
        #expect(read == 8)
        let event = try #require(observed.metrics.events.first)
        #expect(observed.metrics.events.count == 1)
        #expect(event.responseBodyBytes == 8)
        #expect(event.errorKind != nil)
        #expect(event.errorKind != "cancelled")
        let end = try #require(bodyEnds(observed.logger).first)
        #expect(end.summary.contains("body failed ("))
        #expect(end.summary.contains("after 8 B"))
        #expect(end.level == .error)
    }

    @Test("a body let go before its end reports what was read, as cancelled, once")
    func abandonedAfterOneChunk() async throws {
        let observed = try observed(ScriptedChunks(chunks: ["1234", "5678", "9"]))
        let streamed = try await observed.client.stream(Request<Data>.get("/export"))
        for try await _ in streamed.body { break }  // the iterator is dropped after one chunk
        let event = try #require(observed.metrics.events.first)
        #expect(observed.metrics.events.count == 1)
        #expect(event.responseBodyBytes == 4)
        #expect(event.errorKind == "cancelled")
        let end = try #require(bodyEnds(observed.logger).first)
        #expect(end.summary.contains("let go by its reader after 4 B"))
        #expect(end.level == .notice)
        // A second reader of the single-use body neither counts nor reports again.
        await #expect(throws: MessageBodyError.alreadyIterated) {
            for try await _ in streamed.body {}
        }
        #expect(observed.metrics.events.count == 1)
        #expect(bodyEnds(observed.logger).count == 1)
    }

    @Test("a streamed body nobody reads reports 0 bytes when its last copy goes away")
    func neverRead() async throws {
        let observed = try observed(ScriptedChunks(chunks: ["abc"]))
        do {
            _ = try await observed.client.stream(Request<Data>.get("/export"))
        }
        let event = try #require(observed.metrics.events.first)
        #expect(event.responseBodyBytes == 0)
        #expect(event.errorKind == "cancelled")
    }

    @Test("a buffered call is unchanged: its event at once with its size, no body-end entry")
    func bufferedUnchanged() async throws {
        let transport = StubTransport(responses: [.success(HTTPResponse(statusCode: 200, body: Data("0123456789".utf8)))])
        let logger = CapturingNetworkLogger()
        let metrics = CapturingMetricsSink()
        let client = try ObservabilityFixtures.makeClient(
            transport: transport,
            interceptors: [RequestIDInterceptor(), LoggingInterceptor(logger: logger), MetricsInterceptor(sink: metrics)])
        _ = try await client.send(Request<Data>.get("/items"))
        #expect(metrics.events.first?.responseBodyBytes == 10)
        #expect(metrics.events.first?.responseBodyDuration == nil)
        #expect(logger.entries.contains { $0.event == .response && $0.summary.contains("10 B") })
        #expect(!logger.entries.contains { $0.event == .bodyEnd })
    }

    @Test("a 204 has no body to count: its event comes with the head, with 0 bytes, and no body-end entry")
    func noContentIsNotAStream() async throws {
        let observed = try observed(ScriptedChunks(chunks: []), status: 204)
        _ = try await observed.client.stream(Request<Data>.get("/export"))
        #expect(observed.metrics.events.first?.responseBodyBytes == 0)
        #expect(observed.metrics.events.first?.errorKind == nil)
        #expect(bodyEnds(observed.logger).isEmpty)
    }

    @Test("a summary-level logger gets the body-end line too, with the real size")
    func summaryLogger() async throws {
        var head = HTTPResponse(statusCode: 200)
        head.body = MessageBody(ScriptedChunks(chunks: ["abcd", "efgh"]))
        let logger = CapturingNetworkLogger(minimumLevel: .info)
        let client = try ObservabilityFixtures.makeClient(
            transport: StubTransport(responses: [.success(head)]),
            interceptors: [RequestIDInterceptor(), LoggingInterceptor(logger: logger)])
        let streamed = try await client.stream(Request<Data>.get("/feed"))
        _ = try await streamed.body.collect(upTo: 100)
        #expect(logger.entries.map(\.event) == [.response, .bodyEnd])
        #expect(logger.entries.last?.summary.contains("body 8 B in") == true)
    }
}
