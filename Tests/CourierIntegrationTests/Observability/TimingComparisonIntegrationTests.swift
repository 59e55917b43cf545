import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// A real call's report: Courier's own duration next to the transport's measure, and the
/// difference, on the transport under test.
@Suite("Courier and transport timings side by side")
struct TimingComparisonIntegrationTests {
    @Test func aRealCallReportsBothFiguresWhereTheTransportMeasures() async throws {
        let sink = CapturingMetricsSink()
        let logger = CapturingNetworkLogger(minimumLevel: .info)
        let (client, _) = try TestServers.apiClient {
            $0.interceptors = [MetricsInterceptor(sink: sink), LoggingInterceptor(logger: logger)]
        }
        _ = try await client.send(Request<Data>.get("/slow", query: ["seconds": "0.2"]))
        let event = try #require(sink.events.first)
        let line = try #require(logger.entries.first { $0.event == .response }?.summary)
        #expect(event.duration >= .milliseconds(200))
        #if !canImport(Darwin)
        if TestTransport.isCurl {
            let total = try #require(event.taskTimings?.total)
            let outside = try #require(event.durationOutsideTransport)
            #expect(total >= .milliseconds(200), "libcurl measured the server's 0.2 s")
            #expect(outside == event.duration - total)
            // The same call measured twice: Courier's figure holds the transport's (both clocks are
            // monotonic). How much lies outside depends on the machine's load: not asserted.
            #expect(outside >= .zero, "outside the transport: \(outside)")
            #expect(event.duration >= total)
            #expect(line.contains("(transport "), "\(line)")
        } else {
            #expect(event.taskTimings == nil, "Linux URLSession delivers no task metrics")
            #expect(event.durationOutsideTransport == nil)
            #expect(!line.contains("(transport "), "\(line)")
        }
        #endif
    }
}
