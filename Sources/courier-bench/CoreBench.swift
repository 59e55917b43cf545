import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// Client CPU per request: raw `URLSession.data(for:)` + `JSONDecoder` versus Courier's client, on
/// the same loopback endpoint in the same run, after warm-up, at concurrency 1 and 16. Rounds
/// alternate raw/Courier so drift affects both; the median round is reported.
func runCoreBench(serverURL: URL, requests: Int, rounds: Int) async throws {
    let base = serverURL.appendingPathComponent("ns").appendingPathComponent("bench-core")
    let itemURL = base.appendingPathComponent("items").appendingPathComponent("1")

    let rawSession = URLSession(configuration: URLSessionTransport.defaultConfiguration())
    let rawDecoder = APIClient.makeDecoder()
    let raw: @Sendable () async throws -> Void = {
        try await rawGet(BenchItem.self, from: itemURL, session: rawSession, decoder: rawDecoder)
    }

    let client = APIClient(environment: APIEnvironment(name: "bench", baseURL: base))
    let courier: @Sendable () async throws -> Void = {
        _ = try await client.send(GetBenchItem())
    }

    // Warm-up: connections, lazy initialisation, the server's seeded namespace.
    _ = try await measure(requests: 200, concurrency: 4, raw)
    _ = try await measure(requests: 200, concurrency: 4, courier)

    print("core: client CPU per request, GET /items/1 (\(requests) requests x \(rounds) rounds, median)")
    print("  concurrency   raw URLSession   Courier      ratio   (req/s raw / Courier)")
    for concurrency in [1, 16] {
        var rawRuns: [Measurement] = []
        var courierRuns: [Measurement] = []
        for _ in 0..<rounds {
            rawRuns.append(try await measure(requests: requests, concurrency: concurrency, raw))
            courierRuns.append(try await measure(requests: requests, concurrency: concurrency, courier))
        }
        let rawCPU = median(rawRuns.map(\.cpuMicrosPerRequest))
        let courierCPU = median(courierRuns.map(\.cpuMicrosPerRequest))
        let ratio = courierCPU / rawCPU
        print(
            String(
                format: "  %11d   %11.1f µs   %7.1f µs   %5.2fx   (%.0f / %.0f)  target <= 1.10x",
                concurrency, rawCPU, courierCPU, ratio,
                median(rawRuns.map(\.requestsPerSecond)), median(courierRuns.map(\.requestsPerSecond))))
    }
    rawSession.finishTasksAndInvalidate()
}
