import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// A streamed call's real body size in the log and the metrics event, over the real transport.
@Suite("Streamed byte counts against the reference server")
struct StreamedByteCountIntegrationTests {
    @Test("a 1 MB streamed body is logged and measured with its 1,000,000 bytes when read to the end")
    func streamedBytes() async throws {
        let logger = CapturingNetworkLogger(minimumLevel: .info)
        let metrics = CapturingMetricsSink()
        let (client, _) = try TestServers.apiClient { configuration in
            configuration.interceptors = .standard(logger: logger, metrics: metrics)
        }
        let streamed = try await client.stream(
            Request<Data>.get("/stream/bytes", query: ["size": "1000000"]), options: StreamingOptions(bufferLimit: 2 << 20))
        var read = 0
        for try await chunk in streamed.body { read += chunk.count }
        #expect(read == 1_000_000)
        let event = try #require(metrics.events.first)
        #expect(metrics.events.count == 1)
        #expect(event.responseBodyBytes == 1_000_000)
        #expect(event.errorKind == nil)
        let end = try #require(logger.entries.first { $0.event == .bodyEnd })
        #expect(end.summary.contains("body 976.6 KiB in"))
    }
}
