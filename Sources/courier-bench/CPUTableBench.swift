#if canImport(CourierCurl)
import Courier
import CourierCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client CPU table of issue 25 (items 3, 4 and 7): every client sends `GET /ns/{ns}/items`
/// (a static 2 KB JSON file of 14 items served by nginx with keep-alive, decoded into
/// `[BenchItem]`) at concurrency 1, 16 and 32; the client's CPU per request comes from
/// `getrusage` (user + system, this process only), the connections from nginx's stub_status
/// (`accepts` before and after the cell, warm-up included).
///
///     scripts/bench --only cpu [--requests 3000] [--rounds 5] [--concurrency 1,16,32]
///     courier-bench --only cpu --base-url … --status-url … --profile courierCurlObserved --concurrency 1
///         (one client alone, for perf; names: the cases of CPUTableClient, and `rawDelegate`:
///         raw URLSession through a session delegate, see RawDelegateClient.swift; it also prints
///         the process's voluntary and involuntary context switches per request)
///
/// Each round runs every client once per concurrency, in the table's order, with a fresh client
/// (so a fresh connection pool); warm-up requests (2 per worker) open the connections before the
/// CPU is measured. Figures are the median round and, in brackets, the best round (noise on a
/// shared machine only ever adds CPU time). Ratios are taken within a round (against raw
/// URLSession and the plain libcurl loop of that same round), then the median ratio is printed.
/// "Courier + log + metrics" is `.standard(logger:metrics:)` with a logger at `.info` that
/// formats every entry and drops it, and a metrics sink that drops every event.
///
/// Two rows are floors, not clients: ``MinimalCurlBridge`` (the least an async Swift client over a
/// libcurl thread can do: a lock, a wake-up and a continuation per request) and
/// ``RawDelegateClient`` with its tasks made on a queue (FoundationNetworking's delegate path
/// under the rule that nothing blocks the cooperative pool). The goals' ratios read against them.
func runCPUTableBench(serverURL: URL, statusURL: URL?, requests: Int, rounds: Int) async throws {
    let decoder = APIClient.makeDecoder()
    let levels = (argument("--concurrency") ?? "1,16,32").split(separator: ",").compactMap { Int($0) }
    let hostLimit = CurlTransport.Configuration().httpMaximumConnectionsPerHost
    let counter = ConnectionCounter(statusURL: statusURL)
    let clients = CPUTableClient.allCases

    /// One client at one concurrency: CPU µs per request, and the connections the server accepted.
    func cell(_ client: CPUTableClient, concurrency: Int) async throws -> (cpu: Double, connections: Int) {
        let namespace = "bench-cpu-\(UUID().uuidString.prefix(8).lowercased())"
        let base = serverURL.appendingPathComponent("ns").appendingPathComponent(namespace)
        let listURL = base.appendingPathComponent("items")
        let mark = try await counter.mark()
        let cpu: Double
        if client == .libcurlLoop {
            // Its handles and connections live for one call: warm-up would not carry over.
            cpu = RawLibcurl.measure(
                url: listURL.absoluteString, requests: requests, concurrency: concurrency, decoder: decoder,
                hostLimit: hostLimit, decode: { _ = try decoder.decode([BenchItem].self, from: $0) })
        } else {
            let (operation, finish) = client.operation(base: base, listURL: listURL, decoder: decoder)
            _ = try await measure(requests: 2 * concurrency, concurrency: concurrency, operation)
            cpu = try await measure(requests: requests, concurrency: concurrency, operation).cpuMicrosPerRequest
            finish()
        }
        return (cpu, try await counter.count(since: mark, base: base))
    }

    if argument("--profile") == "rawDelegate" {
        // Issue 25 item 4's breakdown: FoundationNetworking's delegate path without Courier.
        for concurrency in levels {
            let namespace = "bench-cpu-\(UUID().uuidString.prefix(8).lowercased())"
            let listURL = serverURL.appendingPathComponent("ns").appendingPathComponent(namespace).appendingPathComponent("items")
            let client = RawDelegateClient()
            let operation: @Sendable () async throws -> Void = {
                _ = try decoder.decode([BenchItem].self, from: try await client.get(listURL))
            }
            _ = try await measure(requests: 2 * concurrency, concurrency: concurrency, operation)
            let cpu = try await measure(requests: requests, concurrency: concurrency, operation).cpuMicrosPerRequest
            client.finish()
            print(String(format: "rawDelegate at c%d: %.1f µs CPU per request", concurrency, cpu))
        }
        return
    }
    if let name = argument("--profile"), let client = clients.first(where: { "\($0)" == name }) {
        // One client alone, for a profiler: --profile courierCurlObserved --concurrency 1.
        for concurrency in levels {
            let switchesBefore = processContextSwitches()
            let result = try await cell(client, concurrency: concurrency)
            let switchesAfter = processContextSwitches()
            // Per request of the cell (its warm-up of 2 per worker included): how often a thread
            // handed the CPU over, the cost a thread hop adds on top of the code that runs.
            let measured = Double(requests + 2 * concurrency)
            print(
                String(
                    format:
                        "%@ at c%d: %.1f µs CPU per request, %d connections, %.2f voluntary + %.2f involuntary context switches per request",
                    name, concurrency, result.cpu, result.connections,
                    Double(switchesAfter.voluntary - switchesBefore.voluntary) / measured,
                    Double(switchesAfter.involuntary - switchesBefore.involuntary) / measured))
        }
        return
    }
    let load = loadAverage()
    print(
        "cpu: client CPU per request (getrusage, µs), GET /items: 2153 B JSON from nginx (keep-alive) decoded into 14 items")
    print(
        "  \(requests) requests per cell, \(rounds) interleaved rounds, host limit \(hostLimit) (libcurl loop and CurlTransport), "
            + "load average at start \(load)")
    var cpu = [[Double]](repeating: [], count: clients.count * levels.count)
    var vsSession = cpu
    var vsLoop = cpu
    var connections = [[Int]](repeating: [], count: clients.count * levels.count)
    for round in 1...rounds {
        for (l, concurrency) in levels.enumerated() {
            var roundCPU = [Double](repeating: 0, count: clients.count)
            for (c, client) in clients.enumerated() {
                let result = try await cell(client, concurrency: concurrency)
                roundCPU[c] = result.cpu
                cpu[c * levels.count + l].append(result.cpu)
                connections[c * levels.count + l].append(result.connections)
            }
            let session = roundCPU[CPUTableClient.rawURLSession.index]
            let loop = roundCPU[CPUTableClient.libcurlLoop.index]
            for c in clients.indices {
                vsSession[c * levels.count + l].append(roundCPU[c] / session)
                vsLoop[c * levels.count + l].append(roundCPU[c] / loop)
            }
        }
        FileHandle.standardError.write(Data("cpu: round \(round) of \(rounds) done, load \(loadAverage())\n".utf8))
    }

    func levelsHeader(_ what: String) -> String { levels.map { "c\($0) \(what)" }.joined(separator: " | ") }
    print("")
    print(
        "| client | \(levelsHeader("µs median (best)")) | \(levelsHeader("vs URLSession")) | \(levelsHeader("vs libcurl loop")) | connections opened per cell (min-max) \(levels.map { "c\($0)" }.joined(separator: " / ")) |"
    )
    print("|---|" + String(repeating: "---|", count: 3 * levels.count + 1))
    for (c, client) in clients.enumerated() {
        let cells = levels.indices.map { c * levels.count + $0 }
        let micros = cells.map { String(format: "%.1f (%.1f)", median(cpu[$0]), cpu[$0].min() ?? 0) }
        let ratiosSession = cells.map { String(format: "%.2f", median(vsSession[$0])) }
        let ratiosLoop = cells.map { String(format: "%.2f", median(vsLoop[$0])) }
        let opened = cells.map { "\(connections[$0].min() ?? 0)-\(connections[$0].max() ?? 0)" }
        print(
            "| \(client.title) | " + micros.joined(separator: " | ") + " | " + ratiosSession.joined(separator: " | ") + " | "
                + ratiosLoop.joined(separator: " | ") + " | " + opened.joined(separator: " / ") + " |")
    }
    print("")
    for (l, concurrency) in levels.enumerated() {
        // What no client can go below here: the goals' ratios next to the floors' (issue 25).
        let bridge = median(vsLoop[CPUTableClient.minimalCurlBridge.index * levels.count + l])
        let queued = median(vsSession[CPUTableClient.rawDelegateQueued.index * levels.count + l])
        print(
            String(
                format: "floor c%-3d least async client over libcurl / libcurl loop = %.2f; "
                    + "raw delegate with tasks made off the pool / raw URLSession = %.2f",
                concurrency, bridge, queued))
    }
    for (l, concurrency) in levels.enumerated() {
        let curl = median(vsLoop[CPUTableClient.courierCurlObserved.index * levels.count + l])
        print(
            String(
                format: "goal c%-3d Courier + log + metrics over CurlTransport / libcurl loop = %.2f (<= 1.10: %@)",
                concurrency, curl, curl <= 1.10 ? "met" : "NOT met"))
        if concurrency <= 16 {
            let session = median(vsSession[CPUTableClient.courierSessionObserved.index * levels.count + l])
            print(
                String(
                    format: "goal c%-3d Courier + log + metrics over URLSession / raw URLSession = %.2f (<= 1.10: %@)",
                    concurrency, session, session <= 1.10 ? "met" : "NOT met"))
        }
    }
}

/// The rows of the CPU table, in the order they run within a round.
enum CPUTableClient: Int, CaseIterable {
    case libcurlLoop, minimalCurlBridge, rawURLSession, rawDelegateQueued, curlTransport, sessionTransport, courierCurl,
        courierCurlObserved, courierSession, courierSessionObserved

    var index: Int { rawValue }

    var title: String {
        switch self {
        case .libcurlLoop: "plain libcurl multi loop (N easy handles, curl_multi_perform + curl_multi_poll)"
        case .minimalCurlBridge: "floor: least async client over a libcurl thread (MinimalCurlBridge, no Courier)"
        case .rawURLSession: "raw URLSession data(for:) + JSONDecoder"
        case .rawDelegateQueued: "floor: raw URLSession delegate, each task made off the cooperative pool (no Courier)"
        case .curlTransport: "CurlTransport alone (send + JSONDecoder)"
        case .sessionTransport: "URLSessionTransport alone (send + JSONDecoder)"
        case .courierCurl: "Courier over CurlTransport (.standard())"
        case .courierCurlObserved: "Courier + info logging + metrics over CurlTransport"
        case .courierSession: "Courier over URLSession (.standard())"
        case .courierSessionObserved: "Courier + info logging + metrics over URLSession"
        }
    }

    /// One request of this client (sent and decoded), and what ends the client after the cell.
    func operation(
        base: URL, listURL: URL, decoder: JSONDecoder
    ) -> (@Sendable () async throws -> Void, () -> Void) {
        let environment = APIEnvironment(name: "bench", baseURL: base)
        let observed: [any Interceptor] = .standard(logger: FormattingLogger(), metrics: DroppingMetricsSink())
        switch self {
        case .libcurlLoop:
            return ({}, {})
        case .rawURLSession:
            let session = URLSession(configuration: URLSessionTransport.defaultConfiguration())
            return (
                { try await rawGet([BenchItem].self, from: listURL, session: session, decoder: decoder) },
                { session.finishTasksAndInvalidate() }
            )
        case .minimalCurlBridge:
            let bridge = MinimalCurlBridge(hostLimit: CurlTransport.Configuration().httpMaximumConnectionsPerHost)
            let url = listURL.absoluteString
            return ({ _ = try decoder.decode([BenchItem].self, from: try await bridge.get(url)) }, { bridge.finish() })
        case .rawDelegateQueued:
            let client = RawDelegateClient(queued: true)
            return ({ _ = try decoder.decode([BenchItem].self, from: try await client.get(listURL)) }, { client.finish() })
        case .curlTransport:
            let transport = CurlTransport()
            return ({ try await rawGet([BenchItem].self, from: listURL, transport: transport, decoder: decoder) }, {})
        case .sessionTransport:
            // Courier's URLSession transport without the client: the transport's share of Courier's
            // cost over raw URLSession, apart from the pipeline's.
            let transport = URLSessionTransport()
            return ({ try await rawGet([BenchItem].self, from: listURL, transport: transport, decoder: decoder) }, {})
        case .courierCurl, .courierCurlObserved, .courierSession, .courierSessionObserved:
            let client = APIClient(environment: environment) {
                if self == .courierCurl || self == .courierCurlObserved { $0.transport = CurlTransport() }
                if self == .courierCurlObserved || self == .courierSessionObserved { $0.interceptors = observed }
            }
            return ({ _ = try await client.send(ListBenchItems()) }, {})
        }
    }
}

/// A logger at `.info` that renders each entry's text (what a console or file logger pays) and
/// drops it.
private struct FormattingLogger: NetworkLogger {
    var minimumLevel: NetworkLogLevel { .info }
    func log(_ entry: NetworkLogEntry) { _ = entry.text.utf8.count }
}

/// The 1-minute load average from /proc/loadavg ("?" where there is none).
func loadAverage() -> String {
    guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "?" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}
#endif
