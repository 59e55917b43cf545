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

    /// Bytes that keep arriving within the idle timeout never fail the stream, however long it
    /// lasts in total. The idle timeout runs on the client's clock, here a `TestClock` the test
    /// moves, and the server sends each beat when the test opens that beat's gate: the test
    /// lets one beat go, reads it, and moves the clock to 3/4 of the timeout past its arrival, so
    /// every gap is under the timeout and the stream spans more than two timeouts. On the wall
    /// clock (keep-alives every 0.1 s against 2 s) a loaded machine delivered a beat more than
    /// 2 s after the one before it, which is the machine's silence, not Courier's. The timeout is
    /// long (20 s) so the transports' own wall-clock backstop (1 s more than it) stays out of reach.
    @Test func keepAlivesBeforeTheTimeoutNeverFailTheStream() async throws {
        let namespace = TestServers.makeNamespace()
        let base = try TestServers.api2URL().appendingPathComponent("ns").appendingPathComponent(namespace)
        let clock = TestClock(mode: .manual)
        let client = APIClient(environment: APIEnvironment(name: "api2", baseURL: base)) {
            TestTransport.configure(&$0)
            $0.clock = clock
        }
        let idle = Duration.seconds(20)
        let beats = 4
        let beat = ": keep-alive\n".utf8.count
        let streamed = try await client.stream(
            Request<Data>.get("/stream/silence", query: ["beats": "\(beats)", "gate": "beat", "silence": "0"]),
            options: StreamingOptions(idleTimeout: idle))
        let buffer = try #require(streamed.body.streamBuffer)
        var bytes = 0
        var chunks = streamed.body.makeAsyncIterator()
        for index in 0..<beats {
            var open = URLRequest(url: base.appendingPathComponent("_gates/beat-\(index)/open"))
            open.httpMethod = "POST"
            let (_, response) = try await URLSession.shared.data(for: open)
            try #require((response as? HTTPURLResponse)?.statusCode == 200)
            while bytes < (index + 1) * beat, let chunk = try await chunks.next() { bytes += chunk.count }
            // The client's scheduler started with the client, at the clock's zero: an arrival's
            // time on it is the clock's offset.
            let next = TestClock.Instant(offset: buffer.activity.lastActivity + idle * 3 / 4)
            if clock.now < next { clock.advance(to: next) }
        }
        while let chunk = try await chunks.next() { bytes += chunk.count }
        #expect(bytes == beats * beat)
        #expect(clock.now.offset > idle * 2, "the stream spanned \(clock.now.offset) of the client's clock")
    }
}
