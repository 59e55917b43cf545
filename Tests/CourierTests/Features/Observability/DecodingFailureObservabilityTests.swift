import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// A call whose accepted response does not decode is a failed call in metrics and logs.
@Suite("Decoding failures in metrics and logs")
struct DecodingFailureObservabilityTests {
    struct Item: Decodable, Sendable {
        var id: Int
        var name: String
    }

    static func observed(_ stub: StubTransport) throws -> (APIClient, CapturingMetricsSink, CapturingNetworkLogger) {
        let sink = CapturingMetricsSink()
        let logger = CapturingNetworkLogger(minimumLevel: .info)
        let client = try ObservabilityFixtures.makeClient(
            transport: stub, interceptors: [LoggingInterceptor(logger: logger), MetricsInterceptor(sink: sink)])
        return (client, sink, logger)
    }

    @Test("a body that does not decode is counted as failed with its error kind, status kept")
    func decodingFailureIsAFailedCall() async throws {
        let (client, sink, logger) = try Self.observed(StubTransport(responses: [.json(#"{"id":"seven"}"#)]))
        var request = Request<Item>.get("/items/7")
        request.pathTemplate = "/items/{id}"
        let error = await #expect(throws: NetworkError.self) { try await client.send(request) }
        guard case .decoding? = error else {
            Issue.record("expected decoding, got \(String(describing: error))")
            return
        }
        let event = try #require(sink.events.first)
        #expect(sink.events.count == 1)
        #expect(event.statusCode == 200)
        #expect(event.errorKind == "decoding")
        let events = logger.entries.map(\.event)
        #expect(events == [.response, .failure])
        let failure = try #require(logger.entries.last)
        #expect(failure.level == .error)
        #expect(failure.summary.hasPrefix("✗ GET /items/{id} decoding"))
    }

    @Test("a body that decodes is a success, and a rejected status is not a decoding failure")
    func successAndStatusUnchanged() async throws {
        let (client, sink, logger) = try Self.observed(
            StubTransport(responses: [.json(#"{"id":7,"name":"Lamp"}"#), .status(404)]))
        _ = try await client.send(Request<Item>.get("/items/7"))
        _ = await #expect(throws: NetworkError.self) { try await client.send(Request<Item>.get("/items/8")) }
        #expect(sink.events.map(\.statusCode) == [200, 404])
        #expect(sink.events.map(\.errorKind) == [nil, nil])
        #expect(logger.entries.map(\.event) == [.response, .response])
    }
}
