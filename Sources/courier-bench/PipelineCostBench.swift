import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// A logger at a fixed level that throws every entry away: what logging costs when nobody reads it.
private struct DiscardingLogger: NetworkLogger {
    let minimumLevel: NetworkLogLevel
    func log(_ entry: NetworkLogEntry) {}
}

/// `GET /items` kept as bytes: the pipeline's cost without decoding's (and without its noise).
private struct ListBenchItemsBytes: Endpoint {
    typealias Response = Data
    var path: String { "/items" }
    var pathTemplate: String? { "/items" }
}

/// A 2 KB JSON array of 14 items, as `GET /items` of a typical API would return.
func pipelineCostBody() -> Data {
    let items = (1...14).map { index in
        #"{"id":\#(index),"name":"Widget \#(index)","price":9.99,"status":"active","tags":["tools"],"#
            + #""createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}"#
    }
    return Data(("[" + items.joined(separator: ",") + "]").utf8)
}

/// The pipeline's own cost (issue 12): CPU per call over an in-memory transport with a 2 KB JSON
/// body, for decoding alone and for the client with several pipelines. The pipeline's cost is a
/// case minus decoding alone. Rounds alternate the cases so drift affects all; medians reported.
///
///     swift run -c release courier-bench --only pipeline [--calls N] [--rounds R] [--case TEXT]
///
/// `--case TEXT` keeps decoding alone and the cases whose name contains TEXT. `--profile NAME` runs
/// the one case named exactly NAME alone, `calls × rounds` times, for `perf record` (its samples
/// are then the case's own, with no baseline mixed in), and prints its CPU per call.
func runPipelineCostBench(calls: Int, rounds: Int, only filter: String? = nil, profile: String? = nil) async throws {
    let body = pipelineCostBody()
    let environment = APIEnvironment(name: "memory", baseURL: URL(string: "http://127.0.0.1:9")!)
    func client(_ interceptors: [any Interceptor], monitors: [any NetworkEventMonitor] = []) -> APIClient {
        APIClient(environment: environment) {
            $0.transport = InstantTransport(body: body)
            $0.interceptors = interceptors
            $0.eventMonitors = monitors
        }
    }
    let logger = DiscardingLogger(minimumLevel: .info)
    let sink = DroppingMetricsSink()
    let decoder = APIClient.makeDecoder()

    var cases: [(name: String, run: @Sendable () async throws -> Void)] = [
        ("decoding alone", { _ = try decoder.decode([BenchItem].self, from: body) })
    ]
    let pipelines: [(String, [any Interceptor])] = [
        ("no interceptors", []),
        ("standard()", .standard()),
        ("standard(logger: info)", .standard(logger: logger)),
        ("standard(metrics:)", .standard(metrics: sink)),
        ("standard(logger: info, metrics:)", .standard(logger: logger, metrics: sink)),
        // One interceptor at a time, to see where the cost of a pipeline goes (--case only:).
        ("only: RequestIDInterceptor", [RequestIDInterceptor()]),
        ("only: LoggingInterceptor(info)", [LoggingInterceptor(logger: logger)]),
        ("only: MetricsInterceptor", [MetricsInterceptor(sink: sink)]),
        ("only: RetryInterceptor", [RetryInterceptor()]),
        ("only: IdempotencyInterceptor", [IdempotencyInterceptor()]),
    ]
    for (name, interceptors) in pipelines {
        let client = client(interceptors)
        cases.append((name, { _ = try await client.send(ListBenchItems()) }))
    }

    // The same pipelines with the body kept as bytes (--case raw:): their cost is the pipeline's
    // own, measured without subtracting decoding.
    for (name, interceptors) in pipelines where !name.hasPrefix("only:") {
        let client = client(interceptors)
        cases.append(("raw: " + name, { _ = try await client.send(ListBenchItemsBytes()) }))
    }

    let monitored = client(.standard(), monitors: [DroppingEventMonitor()])
    cases.append(("standard() + event monitor", { _ = try await monitored.send(ListBenchItems()) }))

    if let profile {
        guard let entry = cases.first(where: { $0.name == profile }) else {
            throw BenchFailure(
                description: "no pipeline case named \"\(profile)\"; cases: \(cases.map(\.name).joined(separator: ", "))")
        }
        let start = processCPUTimeSeconds()
        for _ in 0..<(calls * rounds) { try await entry.run() }
        let micros = (processCPUTimeSeconds() - start) / Double(max(1, calls * rounds)) * 1_000_000
        print(String(format: "pipeline profile: %@ alone, %d calls, %.2f µs CPU per call", entry.name, calls * rounds, micros))
        return
    }
    // The single-interceptor and bytes-only cases run only when asked for (`--case only:`, `raw:`).
    cases = cases.enumerated().filter { index, entry in
        index == 0 || (filter.map { entry.name.contains($0) } ?? !(entry.name.hasPrefix("only:") || entry.name.hasPrefix("raw:")))
    }.map(\.element)
    for entry in cases { _ = try await measure(requests: max(200, calls / 10), concurrency: 1, entry.run) }
    // Each round runs every case in batches of `batch` calls, the cases taking turns batch by
    // batch: a shared machine's slow and fast moments fall on all of them alike, so a case's cost
    // minus decoding alone within one round is steady even when the rounds' totals are not.
    let batch = 250
    var results = Array(repeating: [Double](), count: cases.count)
    for _ in 0..<rounds {
        var seconds = Array(repeating: 0.0, count: cases.count)
        for _ in 0..<max(1, calls / batch) {
            for (index, entry) in cases.enumerated() {
                let start = processCPUTimeSeconds()
                for _ in 0..<batch { try await entry.run() }
                seconds[index] += processCPUTimeSeconds() - start
            }
        }
        for index in cases.indices {
            results[index].append(seconds[index] / Double(max(1, calls / batch) * batch) * 1_000_000)
        }
    }
    // The best round is the steadiest estimate of a case's own cost (noise only ever adds CPU
    // time); the median round and the median of the rounds' differences are printed next to it.
    let decoding = (best: results[0].min() ?? 0, median: median(results[0]))
    print(
        "pipeline cost: CPU per call, in-memory transport, \(body.count) B JSON body "
            + "(\(calls) calls x \(rounds) rounds, cases interleaved in batches of \(batch); best round, median round)")
    print("  case                                  best µs  − decoding   median µs  − decoding")
    for (index, entry) in cases.enumerated() {
        let best = results[index].min() ?? 0
        let middle = median(results[index])
        // The difference within each round, then its median: drift between rounds cancels.
        let difference = median(zip(results[index], results[0]).map { $0 - $1 })
        let name = entry.name.padding(toLength: 36, withPad: " ", startingAt: 0)
        let costs =
            index == 0
            ? String(format: " %8.1f              %8.1f", best, middle)
            : String(format: " %8.1f  %+10.1f   %8.1f  %+10.1f", best, best - decoding.best, middle, difference)
        print("  " + name + costs)
    }
}
