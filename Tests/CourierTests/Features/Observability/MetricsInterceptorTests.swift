import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

@Suite("MetricsInterceptor")
struct MetricsInterceptorTests {
    /// A clock whose time moves forward by `step` every time it is read: a call that reads it at its
    /// start and end measures exactly one step, with no real time involved.
    final class SteppingClock: Clock, @unchecked Sendable {
        // @unchecked: `elapsed` is only touched under `lock`.
        struct Instant: InstantProtocol {
            var offset: Duration
            func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
            func duration(to other: Instant) -> Duration { other.offset - offset }
            static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
        }

        let step: Duration
        private let lock = NSLock()
        private var elapsed = Duration.zero

        init(step: Duration) { self.step = step }

        var now: Instant {
            lock.lock()
            defer { lock.unlock() }
            let current = Instant(offset: elapsed)
            elapsed += step
            return current
        }
        var minimumResolution: Duration { .nanoseconds(1) }
        func sleep(until deadline: Instant, tolerance: Duration?) async throws {}
    }

    @Test func oneEventPerCallWithStatusRetriesAndSizes() async throws {
        let sink = CapturingMetricsSink()
        let stub = StubTransport(responses: [.status(503), .json(#"{"id":42,"name":"Lamp"}"#)])
        let client = try ObservabilityFixtures.makeClient(
            transport: stub,
            interceptors: [
                MetricsInterceptor(sink: sink, clock: SteppingClock(step: .milliseconds(7))),
                ObservabilityFixtures.OneRetryOn503(),
            ])
        var request = Request<HTTPResponse>.raw(
            .put, "/items/42", body: .data(Data("0123456789".utf8), contentType: "text/plain"))
        request.pathTemplate = "/items/{id}"
        let response = try await client.response(for: request)

        let event = try #require(sink.events.first)
        #expect(sink.events.count == 1)
        #expect(event.requestID == response.context.requestID)
        #expect(event.method == .put)
        #expect(event.pathTemplate == "/items/{id}")
        #expect(event.statusCode == 200)
        #expect(event.attempts == 2)
        #expect(event.retryCount == 1)
        #expect(event.requestBodyBytes == 10)
        #expect(event.responseBodyBytes == 23)
        #expect(event.errorKind == nil)
        #expect(event.duration == .milliseconds(7))
        #expect(event.taskTimings == nil, "stubs and Linux deliver no task metrics: absent, not zero")
        #expect(event.cacheOutcome == nil)
    }

    @Test func thePathWithoutItsIdentifiersIsUsedOnlyWhenThereIsNoTemplate() async throws {
        let sink = CapturingMetricsSink()
        let client = try ObservabilityFixtures.makeClient(
            transport: StubTransport { _ in .status(204) }, interceptors: [MetricsInterceptor(sink: sink)])
        _ = try await client.send(Request<HTTPResponse>.raw(.delete, "/items/7"))
        #expect(sink.events.map(\.pathTemplate) == ["/items/{id}"])
        #expect(sink.events.first?.duration ?? .seconds(-1) >= .zero)
    }

    @Test(arguments: [
        (URLError(.notConnectedToInternet), "offline"),
        (URLError(.timedOut), "timedOut"),
        (URLError(.cancelled), "cancelled"),
        (URLError(.cannotConnectToHost), "transport"),
        (PinningFailure.unsupportedPlatform(host: "api.example.com").urlError, "pinning"),
    ])
    func failuresCarryAnErrorKindAndNoStatus(error: URLError, kind: String) async throws {
        let sink = CapturingMetricsSink()
        let client = try ObservabilityFixtures.makeClient(
            transport: StubTransport(responses: [.failure(error)]), interceptors: [MetricsInterceptor(sink: sink)])
        _ = try? await client.send(Request<HTTPResponse>.raw(.get, "/items"))
        let event = try #require(sink.events.first)
        #expect(sink.events.count == 1)
        #expect(event.errorKind == kind)
        #expect(event.statusCode == nil)
        #expect(event.responseBodyBytes == nil)
        #expect(event.attempts == 1)
    }

    @Test func theCacheOutcomeIsReadFromTheContext() async throws {
        struct PretendCache: Interceptor {
            func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
                context.cacheOutcome = .hit
                return .json("{}")
            }
        }
        let sink = CapturingMetricsSink()
        let stub = StubTransport { _ in .status(500) }
        let client = try ObservabilityFixtures.makeClient(
            transport: stub, interceptors: [MetricsInterceptor(sink: sink), PretendCache()])
        _ = try await client.send(Request<HTTPResponse>.raw(.get, "/items"))
        #expect(sink.events.first?.cacheOutcome == .hit)
        #expect(sink.events.first?.attempts == 0, "a cache hit never reaches the transport")
        #expect(stub.requestCount == 0)
    }

    @Test func aTransportThatMeasuresPhasesDeliversThemThroughTheReporter() async throws {
        struct MeasuringTransport: Transport {
            func send(_ request: URLRequest) async throws -> HTTPResponse {
                let start = Date(timeIntervalSince1970: 1_000)
                TaskTimingsReporter.current?.report(
                    TaskTimings(
                        instants: .init(
                            fetchStart: start,
                            requestStart: start.addingTimeInterval(0.010), requestEnd: start.addingTimeInterval(0.012),
                            responseStart: start.addingTimeInterval(0.050), responseEnd: start.addingTimeInterval(0.060)),
                        isReusedConnection: true, networkProtocol: "h2"))
                return .json("{}")
            }
        }
        let sink = CapturingMetricsSink()
        let har = HARRecorder()
        let client = try ObservabilityFixtures.makeClient(
            transport: MeasuringTransport(),
            interceptors: [
                LoggingInterceptor(logger: nil, recorders: [har]), MetricsInterceptor(sink: sink),
            ])
        let response = try await client.response(for: Request<HTTPResponse>.raw(.get, "/items"))
        let timings = try #require(sink.events.first?.taskTimings)
        #expect(timings.domainLookup == nil && timings.connect == nil && timings.secureConnection == nil)
        #expect(Self.isClose(timings.waiting, .milliseconds(38)))
        #expect(Self.isClose(timings.timeToFirstByte, .milliseconds(50)))
        #expect(timings.isReusedConnection == true)
        #expect(response.context.taskTimings == timings)
        #expect(har.exchanges.first?.timings == timings)
        #expect(TaskTimingsReporter.current == nil, "the reporter is bound only while the call runs")
    }

    @Test func phasesWithAMissingOrReversedEndAreAbsent() {
        let start = Date(timeIntervalSince1970: 0)
        let timings = TaskTimings(
            instants: .init(
                domainLookupStart: start, domainLookupEnd: nil,
                connectStart: start.addingTimeInterval(1), connectEnd: start,
                requestStart: start, requestEnd: start.addingTimeInterval(0.5)))
        #expect(timings.domainLookup == nil)
        #expect(timings.connect == nil)
        #expect(timings.requestSend == .milliseconds(500))
        #expect(timings.total == nil)
    }

    /// Within 10 µs (dates are doubles).
    static func isClose(_ value: Duration?, _ expected: Duration) -> Bool {
        guard let value else { return false }
        return value > expected - .microseconds(10) && value < expected + .microseconds(10)
    }
}
