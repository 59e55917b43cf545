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
    /// Silence of exactly the configured length fails the stream, fractions included. The proof is
    /// the server's: the time from its last byte to the client closing the connection.
    // Timing-sensitive: ±0.25 s on the wall clock of a machine shared with builds and other tests.
    @Test(.tags(.timingSensitive), arguments: [0.5, 1.5])
    func silenceOfTheConfiguredLengthFailsTheStream(_ seconds: Double) async throws {
        let (client, namespace) = try TestServers.apiClient()
        let idle = Duration.milliseconds(Int(seconds * 1000))
        let streamed = try await client.stream(
            Request<Data>.get(
                "/stream/silence", query: ["beats": "3", "every": String(seconds / 5), "silence": "20"]),
            options: StreamingOptions(idleTimeout: idle))
        var bytes = 0
        do {
            for try await chunk in streamed.body { bytes += chunk.count }
            Issue.record("the stream ended without an error")
        } catch let error as NetworkError {
            #expect(error.kind == .timedOut, "\(error)")
        }
        #expect(bytes == 3 * ": keep-alive\n".utf8.count)
        var silences: [Double] = []
        for _ in 0..<3000 {  // the server notices the close within its 10 ms poll
            let stats = try await TestServers.stats(namespace: namespace)["streaming"] as? [String: Any]
            silences = stats?["silences"] as? [Double] ?? []
            if !silences.isEmpty { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let silence = try #require(silences.first, "the server saw no close during the silence")
        #expect(abs(silence - seconds) <= 0.25, "closed after \(silence) s of silence, asked \(seconds) s")
    }

    /// Bytes that keep arriving within the idle timeout (keep-alives every 0.1 s against 1 s)
    /// never fail the stream, however long it lasts in total.
    @Test func keepAlivesBeforeTheTimeoutNeverFailTheStream() async throws {
        let (client, _) = try TestServers.apiClient()
        let streamed = try await client.stream(
            Request<Data>.get("/stream/silence", query: ["beats": "20", "every": "0.1", "silence": "0"]),
            options: StreamingOptions(idleTimeout: .seconds(1)))
        var bytes = 0
        for try await chunk in streamed.body { bytes += chunk.count }
        #expect(bytes == 20 * ": keep-alive\n".utf8.count)
    }
}
