import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

/// Courier's own measure of a call next to the transport's (``TaskTimings/total``), and the
/// difference, in the metrics event and the response log line.
@Suite struct TimingComparisonTests {
    /// Takes 50 ms on the test clock and says it measured 40 ms itself.
    struct MeasuringTransport: Transport {
        let clock: TestClock
        var reports = true
        func send(_ request: URLRequest) async throws -> HTTPResponse {
            clock.advance(by: .milliseconds(50))
            if reports { TransportReporter.current?.report(TaskTimings(total: .milliseconds(40))) }
            return .status(200, body: "{}")
        }
    }

    @Test func theMetricsEventCarriesBothFiguresAndTheirDifference() async throws {
        let clock = TestClock()
        let sink = CapturingMetricsSink()
        let client = try ObservabilityFixtures.makeClient(
            transport: MeasuringTransport(clock: clock), interceptors: [MetricsInterceptor(sink: sink, clock: clock)])
        _ = try await client.send(Request<Data>.get("/items"))
        let event = try #require(sink.events.first)
        #expect(event.duration == .milliseconds(50))
        #expect(event.taskTimings?.total == .milliseconds(40))
        #expect(event.durationOutsideTransport == .milliseconds(10))
    }

    @Test func withoutATransportMeasureThereIsNoDifference() async throws {
        let clock = TestClock()
        let sink = CapturingMetricsSink()
        let client = try ObservabilityFixtures.makeClient(
            transport: MeasuringTransport(clock: clock, reports: false),
            interceptors: [MetricsInterceptor(sink: sink, clock: clock)])
        _ = try await client.send(Request<Data>.get("/items"))
        let event = try #require(sink.events.first)
        #expect(event.duration == .milliseconds(50))
        #expect(event.taskTimings == nil)
        #expect(event.durationOutsideTransport == nil, "absent, not the whole duration")
    }

    @Test func aRetriedCallNeverShowsAnEarlierAttemptsTransportMeasure() async throws {
        let attempts = Locked(0)
        let transport = StubTransport { _ in
            let attempt = attempts.withLock {
                $0 += 1
                return $0
            }
            if attempt == 1 {
                TransportReporter.current?.report(TaskTimings(total: .milliseconds(40)))
                return .status(503)
            }
            return .status(200, body: "{}")  // measures nothing
        }
        let sink = CapturingMetricsSink()
        let environment = try APIEnvironment(name: "stub", baseURL: "https://api.example.com")
        let client = APIClient(environment: environment) {
            $0.transport = transport
            $0.interceptors = [MetricsInterceptor(sink: sink), ObservabilityFixtures.OneRetryOn503()]
        }
        _ = try await client.send(Request<Data>.get("/items"))
        let event = try #require(sink.events.first)
        #expect(event.attempts == 2)
        #expect(event.taskTimings == nil)
        #expect(event.durationOutsideTransport == nil)
    }

    @Test func theResponseLogLineShowsTheTransportsMeasureAndTheDifference() async throws {
        let logger = CapturingNetworkLogger(minimumLevel: .info)
        let transport = StubTransport { _ in
            TransportReporter.current?.report(TaskTimings(total: .zero))  // measured nothing: all of it is Courier's
            return .status(200, body: "{}")
        }
        let client = try ObservabilityFixtures.makeClient(
            transport: transport, interceptors: [LoggingInterceptor(logger: logger)])
        _ = try await client.send(Request<Data>.get("/items"))
        let line = try #require(logger.entries.first { $0.event == .response }?.summary)
        #expect(line.contains(" (transport 0.0 ms, +"), "\(line)")
        #expect(line.hasSuffix("2 B [\(line.suffix(9).prefix(8))]"), "the size still follows: \(line)")
    }

    @Test func theComparisonIsSignedAndInMilliseconds() {
        #expect(LogFormatting.timingComparison(.milliseconds(42), .microseconds(41_200)) == "(transport 41.2 ms, +0.8 ms)")
        #expect(LogFormatting.timingComparison(.milliseconds(41), .microseconds(41_200)) == "(transport 41.2 ms, -0.2 ms)")
        #expect(LogFormatting.timingComparison(.seconds(2), .milliseconds(1_500)) == "(transport 1.50 s, +500.0 ms)")
    }
}
