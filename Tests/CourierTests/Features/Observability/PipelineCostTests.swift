import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

/// Issue 12, "the pipeline's own cost": nothing is redacted or formatted for a level no logger
/// writes, records are built when first read (with the secrets of every earlier pass), metrics
/// events keep their values, and the fast paths behind them agree with what they replace.
@Suite("Pipeline cost")
struct PipelineCostTests {
    /// A logger that counts what reaches it.
    final class CountingLogger: NetworkLogger {
        let minimumLevel: NetworkLogLevel
        private let count = Locked(0)
        init(minimumLevel: NetworkLogLevel) { self.minimumLevel = minimumLevel }
        func log(_ entry: NetworkLogEntry) { count.withLock { $0 += 1 } }
        var entries: Int { count.current }
    }

    static func client(_ transport: any Transport, _ interceptors: [any Interceptor]) throws -> APIClient {
        try ObservabilityFixtures.makeClient(transport: transport, interceptors: interceptors)
    }

    @Test func aSuccessBelowTheLoggersLevelIsNeitherRedactedNorFormatted() async throws {
        let logger = CountingLogger(minimumLevel: .error)
        let stub = StubTransport(responses: [.json(#"{"id":1}"#)])
        let client = try Self.client(stub, .standard(logger: logger, metrics: CapturingMetricsSink()))

        let response = try await client.response(for: Request<HTTPResponse>.raw(.get, "/items/1"))

        #expect(response.context.redactedRecordCount == 0, "no record built for an info entry a logger at error drops")
        #expect(logger.entries == 0)
        // Built when read, with what the interceptor saw.
        let request = try #require(response.context.requestRecord)
        #expect(response.context.redactedRecordCount == 1)
        #expect(request.url == "https://api.example.com/items/1")
        #expect(request.method == .get)
        #expect(request.attempt == 1)
        #expect(request.headers["X-Request-ID"] == response.context.requestID.description)
        let record = try #require(response.context.responseRecord)
        #expect(response.context.redactedRecordCount == 2)
        #expect(record.statusCode == 200)
        #expect(record.bodySize == 8)
        #expect(record.attempt == 1)
        #expect(response.context.errorRecord == nil)
    }

    @Test func anEntryAtTheLoggersLevelIsRedactedAndWritten() async throws {
        let logger = CapturingNetworkLogger(minimumLevel: .error)
        let stub = StubTransport(responses: [.status(500), .status(500), .status(500), .status(500)])
        let client = try Self.client(stub, [RequestIDInterceptor(), LoggingInterceptor(logger: logger)])

        let response = try await client.response(for: Request<HTTPResponse>.raw(.get, "/items/1"))

        #expect(response.context.redactedRecordCount == 2)
        let entry = try #require(logger.entries.first)
        #expect(logger.entries.count == 1)
        #expect(entry.level == .error)
        #expect(entry.event == .response)
        #expect(entry.summary.hasPrefix("← 500 GET /items/1 "))
        #expect(entry.details == ["GET https://api.example.com/items/1"])
    }

    @Test func aFailureBelowTheLoggersLevelBuildsNothingUntilRead() async throws {
        let logger = CountingLogger(minimumLevel: .error)
        let client = try Self.client(StubTransport { _ in throw CancellationError() }, [LoggingInterceptor(logger: logger)])
        let context = RequestContext(pathTemplate: "/items/{id}")
        _ = try? await client.response(for: Request<HTTPResponse>.raw(.get, "/items/1"), context: context)

        #expect(context.redactedRecordCount == 0, "a cancellation is a notice; the logger writes errors only")
        #expect(logger.entries == 0)
        let error = try #require(context.errorRecord)
        #expect(error.kind == "cancelled")
        #expect(context.redactedRecordCount == 2, "the request record is built first: its secrets come first")
    }

    @Test func aRecordReadLaterHidesWhatAnInnerPassLearned() async throws {
        // Nothing is logged or recorded, so every record is built when read — the outer response
        // first. The token only the inner pass saw must still be hidden in it: building it builds
        // every earlier record first, in order.
        let client = try Self.client(
            ObservabilityFixtures.echoingStub(),
            [
                LoggingInterceptor(logger: nil),
                ObservabilityFixtures.AddHeader(name: "X-Upstream", value: "Bearer SECRET-INNER"),
                ObservabilityFixtures.AddHeader(name: "Authorization", value: "Bearer SECRET-INNER"),
                LoggingInterceptor(logger: nil),
            ])
        let request = Request<HTTPResponse>.raw(.get, "/echo").policy(EndpointPolicy.standard.with(\.logging, .debugSafe))
        let response = try await client.response(for: request)

        #expect(response.context.redactedRecordCount == 0)
        let outer = try #require(response.context.responseRecord)
        #expect(response.context.redactedRecordCount == 4)
        let preview = "\(try #require(outer.body))"
        #expect(preview.contains("headerList"))
        #expect(!preview.contains("SECRET-INNER"))
    }

    @Test func metricsEventsCarryTheCallsValuesNextToInfoLogging() async throws {
        let sink = CapturingMetricsSink()
        let logger = CapturingNetworkLogger(minimumLevel: .info)
        let stub = StubTransport(responses: [.json(#"{"id":1,"name":"Lamp"}"#)])
        let client = try Self.client(stub, .standard(logger: logger, metrics: sink))
        var request = Request<HTTPResponse>.raw(.get, "/items/1")
        request.pathTemplate = "/items/{id}"

        let response = try await client.response(for: request)

        let event = try #require(sink.events.first)
        #expect(sink.events.count == 1)
        #expect(event.requestID == response.context.requestID)
        #expect(stub.requests.first?.value(forHTTPHeaderField: "X-Request-ID") == event.requestID.description)
        #expect(event.method == .get)
        #expect(event.pathTemplate == "/items/{id}")
        #expect(event.statusCode == 200)
        #expect(event.attempts == 1)
        #expect(event.retryCount == 0)
        #expect(event.requestBodyBytes == 0)
        #expect(event.responseBodyBytes == 22)
        #expect(event.errorKind == nil)
        #expect(event.redirectCount == 0)
        #expect(logger.entries.map(\.level) == [.info], "one response line at info, no request line")

        // A failure: the error kind, no status, no response size.
        let failing = try Self.client(
            StubTransport(responses: [.failure(URLError(.notConnectedToInternet))]), .standard(metrics: sink))
        _ = try? await failing.response(for: Request<HTTPResponse>.raw(.post, "/items"))
        let failure = try #require(sink.events.last)
        #expect(sink.events.count == 2)
        #expect(failure.errorKind == "offline")
        #expect(failure.statusCode == nil)
        #expect(failure.responseBodyBytes == nil)
        #expect(failure.attempts == 1)
    }

    @Test func theRequestIDIsSentOnceWhereverItIsAdded() async throws {
        let stub = StubTransport(responses: [.json("{}"), .json("{}"), .json("{}"), .json("{}")])
        let client = try Self.client(stub, .standard())
        // Added with the other fields by the builder.
        let plain = try await client.response(for: Request<HTTPResponse>.raw(.get, "/a"))
        // The endpoint's own value is kept.
        _ = try await client.response(for: Request<HTTPResponse>.raw(.get, "/b", headers: ["x-request-id": "mine"]))
        // A request modifier runs after the builder, so the interceptor adds it as before.
        let modified = try await client.response(
            for: Request<HTTPResponse>.raw(.get, "/c").modifyRequest { $0.setValue("1", forHTTPHeaderField: "X-Other") })
        // A custom header name.
        let custom = try Self.client(stub, [RequestIDInterceptor(headerName: "X-Correlation-ID")])
        let correlated = try await custom.response(for: Request<HTTPResponse>.raw(.get, "/d"))

        let sent = stub.requests
        #expect(sent.count == 4)
        #expect(sent[0].value(forHTTPHeaderField: "X-Request-ID") == plain.context.requestID.description)
        #expect(sent[1].value(forHTTPHeaderField: "X-Request-ID") == "mine")
        #expect(sent[2].value(forHTTPHeaderField: "X-Request-ID") == modified.context.requestID.description)
        #expect(sent[3].value(forHTTPHeaderField: "X-Correlation-ID") == correlated.context.requestID.description)
        #expect(sent[3].value(forHTTPHeaderField: "X-Request-ID") == nil)
    }

    // MARK: Fast paths agree with what they replace

    @Test func durationsAndSizesAreFormattedLikePrintf() {
        // Values that are not exact binary ties, where printf and rounding-half-away agree.
        for value in [0.0, 0.04, 0.049, 0.051, 0.96, 1.0, 9.99, 12.4, 12.449, 99.951, 999.94, 999.96, 1023.9, 123_456.78] {
            #expect(LogFormatting.fixed(value, digits: 1) == String(format: "%.1f", value), "\(value)")
            #expect(LogFormatting.fixed(value, digits: 2) == String(format: "%.2f", value), "\(value)")
        }
        #expect(LogFormatting.milliseconds(.microseconds(12_400)) == "12.4 ms")
        #expect(LogFormatting.milliseconds(.milliseconds(1520)) == "1.52 s")
        #expect(LogFormatting.bytes(512) == "512 B")
        #expect(LogFormatting.bytes(1536) == "1.5 KiB")
        #expect(LogFormatting.bytes(3_355_443) == "3.2 MiB")
    }

    @Test func requestIDTextIsTheLowerCaseUUIDString() {
        for _ in 0..<50 {
            let uuid = UUID()
            #expect(RequestID(uuid).description == uuid.uuidString.lowercased())
        }
    }

    @Test func byteSearchMatchesLikeTheCharacterSearch() {
        // The reference: the implementation before the byte search.
        func reference(_ list: RedactionList, _ name: String) -> Bool {
            let normalised = String(
                String.UnicodeScalarView(
                    name.lowercased().unicodeScalars.filter {
                        ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0.value > 0x7F
                    }))
            guard !normalised.isEmpty else { return false }
            return list.exactNames.contains(normalised) || list.fragments.contains { normalised.contains($0) }
        }
        var list = RedactionList.defaultHeaders
        list.insertFragment("geheimnis")
        list.insertFragment("clé")
        let names = [
            "Authorization", "X-Refresh-Token", "x_api_key", "Content-Type", "Accept", "X-Request-ID", "tokens",
            "TOKEN", "tok", "", "-", "PIN", "shipping", "Geheimnis-Wert", "ma-clé", "ma-cle", "Clé\u{301}", "Ünïcode-Token",
            "session", "x-session-id", "footprint", "X-Amz-Security-Token", "set-cookie", "Cookie2",
        ]
        for name in names {
            #expect(list.matches(name) == reference(list, name), "\(name)")
        }
    }

    @Test func fieldNamesCompareIgnoringASCIICase() {
        let pairs = [
            ("Content-Type", "content-type"), ("ETag", "Etag"), ("Accept", "Accepts"), ("X-A", "X-B"), ("", ""),
            ("Straße", "STRASSE"), ("Ünï", "ünï"),
        ]
        for (lhs, rhs) in pairs {
            #expect(lhs.equalsFieldName(rhs) == (lhs.caseInsensitiveCompare(rhs) == .orderedSame), "\(lhs) \(rhs)")
        }
        #expect("Content-Type".equalsFieldName("CONTENT-TYPE"))
        #expect(!"Content-Type".equalsFieldName("Content-Typ"))
    }
}
