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
    /// Silence of exactly the configured length fails the stream, fractions included.
    // Timing-sensitive: the bound (±0.25 s) is measured on the wall clock of a shared machine.
    @Test(.tags(.timingSensitive), arguments: [0.5, 1.5])
    func silenceOfTheConfiguredLengthFailsTheStream(_ seconds: Double) async throws {
        let (client, _) = try TestServers.apiClient()
        let idle = Duration.milliseconds(Int(seconds * 1000))
        let streamed = try await client.stream(
            Request<Data>.get("/stream/silence", query: ["beats": "3", "every": "0.2", "silence": "20"]),
            options: StreamingOptions(idleTimeout: idle))
        let clock = ContinuousClock()
        var lastChunk = clock.now
        var chunks = 0
        do {
            for try await _ in streamed.body {
                chunks += 1
                lastChunk = clock.now
            }
            Issue.record("the stream ended without an error")
        } catch let error as NetworkError {
            #expect(error.kind == .timedOut, "\(error)")
        }
        let silence = lastChunk.duration(to: clock.now)
        #expect(chunks >= 1)
        #expect(silence >= idle - .milliseconds(250), "failed after \(silence) of silence")
        #expect(silence <= idle + .milliseconds(250), "failed after \(silence) of silence")
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
