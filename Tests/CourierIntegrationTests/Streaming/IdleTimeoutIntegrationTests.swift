import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// `StreamingOptions.idleTimeout` as asked, on both transports (`COURIER_TRANSPORT`), against the
/// reference server's `/stream/silence` (keep-alive chunks, then a silent open connection).
/// Courier enforces the idle timeout itself: FoundationNetworking counts whole seconds and
/// libcurl's low-speed limit averages over a window, so neither transport could.
@Suite("Idle timeout of streamed bodies")
struct IdleTimeoutIntegrationTests {
    /// The wall-clock checks: `scripts/test` runs suites named `OnAQuietMachine` in a pass of
    /// their own, one test at a time, so the bound measures Courier and not the parallel suite.
    @Suite("on a quiet machine") struct OnAQuietMachine {
        /// Silence of exactly the configured length fails the stream, fractions included. The proof is
        /// the server's: the time from its last byte to the client closing the connection.
        // Timing-sensitive: ±0.25 s on the wall clock. Under the parallel suite's load on 2 cores the
        // caller saw the failure on time but the connection's close reached the server 0.7-1.7 s
        // after FoundationNetworking's cancel() had returned (<10 ms): socket teardown below Courier.
        @Test(.tags(.timingSensitive), arguments: [0.5, 1.5])
        func silenceOfTheConfiguredLengthFailsTheStream(_ seconds: Double) async throws {
            // The second API instance: the first serves the rest of the suite in parallel, and a busy
            // event loop notices the close late (seconds under full-suite load, measured), which is
            // the server's lateness, not the client's.
            let namespace = TestServers.makeNamespace()
            let base = try TestServers.api2URL().appendingPathComponent("ns").appendingPathComponent(namespace)
            let client = APIClient(environment: APIEnvironment(name: "api2", baseURL: base)) {
                TestTransport.configure(&$0)
            }
            let idle = Duration.milliseconds(Int(seconds * 1000))
            let streamed = try await client.stream(
                Request<Data>.get(
                    "/stream/silence", query: ["beats": "3", "every": String(seconds / 5), "silence": "20"]),
                options: StreamingOptions(idleTimeout: idle))
            var bytes = 0
            let clock = ContinuousClock()
            var lastChunk = clock.now
            var failedAfter = Duration.zero
            do {
                for try await chunk in streamed.body {
                    bytes += chunk.count
                    lastChunk = clock.now
                }
                Issue.record("the stream ended without an error")
            } catch let error as NetworkError {
                failedAfter = lastChunk.duration(to: clock.now)
                #expect(error.kind == .timedOut, "\(error)")
            }
            #expect(bytes == 3 * ": keep-alive\n".utf8.count)
            var silences: [Double] = []
            var lags: [Double] = []
            let stats = base.appendingPathComponent("_stats")
            for _ in 0..<3000 {  // the server notices the close within its 10 ms poll
                let (data, _) = try await URLSession.shared.data(from: stats)
                let streaming = (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["streaming"] as? [String: Any]
                silences = streaming?["silences"] as? [Double] ?? []
                lags = streaming?["silenceLags"] as? [Double] ?? []
                if !silences.isEmpty { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            let silence = try #require(silences.first, "the server saw no close during the silence")
            let lag = lags.first ?? 0
            let seen = Double(failedAfter.components.seconds) + Double(failedAfter.components.attoseconds) / 1e18
            #expect(
                abs(silence - seconds) <= 0.25,
                "closed after \(silence) s of silence, asked \(seconds) s (the server polled up to \(lag) s late; the caller saw the failure \(seen) s after its last chunk)"
            )
        }
    }

    /// Bytes that keep arriving within the idle timeout (keep-alives every 0.1 s against 2 s, for
    /// 4 s in all) never fail the stream, however long it lasts in total.
    @Test func keepAlivesBeforeTheTimeoutNeverFailTheStream() async throws {
        // The second API instance: on the first, which serves the rest of the suite, a gap of over
        // 2 s between two beats was seen under a loaded fresh-clone run (the server's event loop
        // was busy, not the client).
        let namespace = TestServers.makeNamespace()
        let base = try TestServers.api2URL().appendingPathComponent("ns").appendingPathComponent(namespace)
        let client = APIClient(environment: APIEnvironment(name: "api2", baseURL: base)) {
            TestTransport.configure(&$0)
        }
        let streamed = try await client.stream(
            Request<Data>.get("/stream/silence", query: ["beats": "40", "every": "0.1", "silence": "0"]),
            options: StreamingOptions(idleTimeout: .seconds(2)))
        var bytes = 0
        for try await chunk in streamed.body { bytes += chunk.count }
        #expect(bytes == 40 * ": keep-alive\n".utf8.count)
    }
}
