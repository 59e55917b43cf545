import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// The body of `GET /cache/resource/{name}`.
private struct CacheBenchResource: Codable, Sendable {
    let name: String
    let version: Int
    let serial: Int
}

/// Cost per request of a cache hit — memory storage and disk storage — versus a network round
/// trip through the same client pipeline, in the same run: `GET /cache/resource/bench` with
/// `Cache-Control: max-age=3600`, concurrency 1, after warm-up; the median of `rounds` rounds.
/// Reports wall-clock µs per request (latency) and client CPU µs per request, and checks with the
/// server's counters that hits really stayed off the network.
///
/// - Parameters:
///   - serverURL: The reference server root.
///   - requests: Requests per round and per case.
///   - rounds: Rounds per case.
/// - Throws: Transport or decoding errors, or a `URLError(.badServerResponse)` when a "hit"
///   reached the server.
func runCacheBench(serverURL: URL, requests: Int = 2000, rounds: Int = 3) async throws {
    let namespace = "bench-cache-\(UUID().uuidString.prefix(8).lowercased())"
    let base = serverURL.appendingPathComponent("ns").appendingPathComponent(namespace)
    let environment = APIEnvironment(name: "bench", baseURL: base)
    let resource = Request<CacheBenchResource>.get("/cache/resource/bench", query: ["cc": "max-age=3600"])
    let network = resource.policy(.standard.with(\.cache, .reloadIgnoringCacheData))

    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-cache-\(namespace)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let memoryCache = HTTPCache(storage: MemoryCacheStorage())
    let diskCache = HTTPCache(storage: DiskCacheStorage(directory: directory))
    let networkCache = HTTPCache(storage: MemoryCacheStorage())
    let memoryClient = APIClient(environment: environment) {
        $0.interceptors = [RequestIDInterceptor()] + memoryCache.interceptors()
    }
    let diskClient = APIClient(environment: environment) { $0.interceptors = [RequestIDInterceptor()] + diskCache.interceptors() }
    let networkClient = APIClient(environment: environment) {
        $0.interceptors = [RequestIDInterceptor()] + networkCache.interceptors()
    }

    let cases: [(String, @Sendable () async throws -> Void)] = [
        ("network round trip", { _ = try await networkClient.send(network) }),
        ("memory hit", { _ = try await memoryClient.send(resource) }),
        ("disk hit", { _ = try await diskClient.send(resource) }),
    ]

    // Warm-up: connections, lazy initialisation, and one stored entry per cache.
    for (_, operation) in cases { _ = try await measure(requests: 100, concurrency: 1, operation) }
    let before = try await benchServerRequests(environment: environment)

    print("cache: cost per request, GET /cache/resource/bench (\(requests) requests x \(rounds) rounds, concurrency 1, median)")
    print("  case                  wall µs/req    CPU µs/req    vs network (wall)")
    var results: [(String, Double, Double)] = []
    for (name, operation) in cases {
        var runs: [Measurement] = []
        for _ in 0..<rounds { runs.append(try await measure(requests: requests, concurrency: 1, operation)) }
        let wall = 1_000_000 / median(runs.map(\.requestsPerSecond))
        results.append((name, wall, median(runs.map(\.cpuMicrosPerRequest))))
    }
    let networkWall = results.first?.1 ?? 1
    for (name, wall, cpu) in results {
        let label = name.padding(toLength: 20, withPad: " ", startingAt: 0)
        print("  \(label)  " + String(format: "%11.1f   %11.1f    %8.1fx faster", wall, cpu, networkWall / wall))
    }

    let after = try await benchServerRequests(environment: environment)
    let expected = requests * rounds
    print("  server saw \(after - before) requests during the measured rounds (network case: \(expected); hits: 0)")
    guard after - before == expected else { throw URLError(.badServerResponse) }
}

/// `cache.bench.requests` from the namespace's `_stats`.
private func benchServerRequests(environment: APIEnvironment) async throws -> Int {
    let client = APIClient(environment: environment)
    let stats = try await client.send(Request<HTTPResponse>.raw(.get, "/_stats"))
    let json = try JSONSerialization.jsonObject(with: stats.data) as? [String: Any]
    return ((json?["cache"] as? [String: Any])?["bench"] as? [String: Any])?["requests"] as? Int ?? 0
}
