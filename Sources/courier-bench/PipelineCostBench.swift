import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// A transport that answers every request at once with the same response, so the bench sees the
/// client's and the pipeline's own CPU and nothing else.
private struct FixedTransport: Transport {
    let body: Data
    func send(_ request: URLRequest) async throws -> HTTPResponse {
        HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: body, url: request.url)
    }
}

/// A logger at a fixed level that throws every entry away: what logging costs when nobody reads it.
private struct DiscardingLogger: NetworkLogger {
    let minimumLevel: NetworkLogLevel
    func log(_ entry: NetworkLogEntry) {}
}

/// A metrics sink that does nothing with its events.
private struct NoOpMetricsSink: NetworkMetricsSink {
    func record(_ event: NetworkMetricsEvent) {}
}

/// An event monitor that does nothing with its events: what attaching one costs.
private struct NoOpEventMonitor: NetworkEventMonitor {
    func receive(_ event: NetworkEvent) {}
}

/// `GET /items` answered by ``FixedTransport`` with a 2 KB JSON array.
private struct ListBenchItems: Endpoint {
    typealias Response = [BenchItem]
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
/// `--case TEXT` keeps decoding alone and the cases whose name contains TEXT (for profiling one).
func runPipelineCostBench(calls: Int, rounds: Int, only filter: String? = nil) async throws {
    let body = pipelineCostBody()
    let environment = APIEnvironment(name: "memory", baseURL: URL(string: "http://127.0.0.1:9")!)
    func client(_ interceptors: [any Interceptor], monitors: [any NetworkEventMonitor] = []) -> APIClient {
        APIClient(environment: environment) {
            $0.transport = FixedTransport(body: body)
            $0.interceptors = interceptors
            $0.eventMonitors = monitors
        }
    }
    let logger = DiscardingLogger(minimumLevel: .info)
    let sink = NoOpMetricsSink()
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
    ]
    for (name, interceptors) in pipelines {
        let client = client(interceptors)
        cases.append((name, { _ = try await client.send(ListBenchItems()) }))
    }

    let monitored = client(.standard(), monitors: [NoOpEventMonitor()])
    cases.append(("standard() + event monitor", { _ = try await monitored.send(ListBenchItems()) }))

    if let filter { cases = cases.enumerated().filter { $0.offset == 0 || $0.element.name.contains(filter) }.map(\.element) }
    for entry in cases { _ = try await measure(requests: max(200, calls / 10), concurrency: 1, entry.run) }
    var results = Array(repeating: [Double](), count: cases.count)
    for _ in 0..<rounds {
        for (index, entry) in cases.enumerated() {
            results[index].append(try await measure(requests: calls, concurrency: 1, entry.run).cpuMicrosPerRequest)
        }
    }
    // The machine may be shared: the best round is the steadiest estimate of a case's own cost
    // (noise only ever adds CPU time); the median is printed next to it.
    let decoding = (best: results[0].min() ?? 0, median: median(results[0]))
    print(
        "pipeline cost: CPU per call, in-memory transport, \(body.count) B JSON body "
            + "(\(calls) calls x \(rounds) rounds; best round, median round)")
    print("  case                                  best µs  − decoding   median µs  − decoding")
    for (index, entry) in cases.enumerated() {
        let best = results[index].min() ?? 0
        let middle = median(results[index])
        let name = entry.name.padding(toLength: 36, withPad: " ", startingAt: 0)
        let costs =
            index == 0
            ? String(format: " %8.1f              %8.1f", best, middle)
            : String(format: " %8.1f  %+10.1f   %8.1f  %+10.1f", best, best - decoding.best, middle, middle - decoding.median)
        print("  " + name + costs)
    }
}
