#if canImport(CourierCurl)
import Courier
import CourierCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Connection reuse under concurrency (issue 25, items 1 and 3): each cell sends `requests`
/// `GET /items/1` (decoded) at one concurrency with a fresh client on a fresh server namespace,
/// with the default host limit (6), and reports the client CPU per request, its ratio to the
/// plain libcurl multi loop (N easy handles on one multi handle, `curl_multi_perform` +
/// `curl_multi_poll`, same host limit) and the TCP connections the server saw for the cell.
///
///     courier-bench --only curl-connections [--requests 3000] [--rounds 3] [--concurrency 1,16,32]
///         [--base-url $COURIER_NGINX_URL --status-url $COURIER_NGINX_STATUS_URL]
///
/// Against the reference server the counts come from its `_stats`; against nginx
/// (`scripts/bench-nginx start`), whose answers cost far less than the Python server's, from
/// stub_status's `accepts` before and after each cell. The CPU figures mean something only in a
/// release build (`swift run -c release`); the connection counts do in any build.
func runCurlReuseBench(serverURL: URL, requests: Int, rounds: Int) async throws {
    let decoder = APIClient.makeDecoder()
    let levels = (argument("--concurrency") ?? "1,16,32").split(separator: ",").compactMap { Int($0) }
    let hostLimit = CurlTransport.Configuration().httpMaximumConnectionsPerHost
    let counter = ConnectionCounter(statusURL: argument("--status-url").flatMap(URL.init(string:)))

    /// One client in one cell: CPU µs per request, and how many connections the server saw.
    func cell(_ kind: Int, concurrency: Int) async throws -> (cpu: Double, connections: Int) {
        let namespace = "bench-conn-\(UUID().uuidString.prefix(8).lowercased())"
        let base = serverURL.appendingPathComponent("ns").appendingPathComponent(namespace)
        let itemURL = base.appendingPathComponent("items").appendingPathComponent("1")
        let mark = try await counter.mark()
        let cpu: Double
        switch kind {
        case 0:
            cpu = RawLibcurl.measure(
                url: itemURL.absoluteString, requests: requests, concurrency: concurrency, decoder: decoder,
                hostLimit: hostLimit)
        case 1:
            let transport = CurlTransport()
            cpu = try await measure(requests: requests, concurrency: concurrency) {
                try await rawGet(BenchItem.self, from: itemURL, transport: transport, decoder: decoder)
            }.cpuMicrosPerRequest
        default:
            let client = APIClient(environment: APIEnvironment(name: "bench", baseURL: base)) {
                $0.transport = CurlTransport()
            }
            cpu = try await measure(requests: requests, concurrency: concurrency) {
                _ = try await client.send(GetBenchItem())
            }.cpuMicrosPerRequest
        }
        return (cpu, try await counter.count(since: mark, base: base))
    }

    print("curl-connections: GET /items/1 + decoding, \(requests) requests per cell, host limit \(hostLimit), \(rounds) rounds")
    print("  (CPU µs per request, median; connections the server saw per cell, min-max over the rounds)")
    print("  conc   libcurl loop (conns)   CurlTransport (conns)   Courier+Curl (conns)   Curl/loop  Courier/loop")
    for concurrency in levels {
        var cpu: [[Double]] = Array(repeating: [], count: 3)
        var connections: [[Int]] = Array(repeating: [], count: 3)
        for _ in 0..<rounds {
            for kind in 0..<3 {
                let result = try await cell(kind, concurrency: concurrency)
                cpu[kind].append(result.cpu)
                connections[kind].append(result.connections)
            }
        }
        let m = cpu.map(median)
        let spans = connections.map { "\($0.min() ?? 0)-\($0.max() ?? 0)" }
        func column(_ kind: Int, _ width: Int) -> String {
            (String(format: "%7.1f", m[kind]) + " (" + spans[kind] + ")").padding(toLength: width, withPad: " ", startingAt: 0)
        }
        print(
            "  " + String(format: "%4d", concurrency) + "   " + column(0, 23) + column(1, 24) + column(2, 21)
                + String(format: "   %7.2fx  %10.2fx", m[1] / m[0], m[2] / m[0]))
    }
}

/// The TCP connections a server accepted during one cell.
struct ConnectionCounter {
    /// nginx's stub_status page, or `nil` for the reference server's per-namespace count.
    let statusURL: URL?

    /// The server's `accepts` before a cell (0 for the reference server, whose count is per namespace).
    func mark() async throws -> Int {
        guard let statusURL else { return 0 }
        return try accepts(statusURL)
    }

    /// The connections opened since `mark`: the namespace's `connections` from `GET {base}/_stats`,
    /// or the growth of `accepts` less the status request's own connection.
    func count(since mark: Int, base: URL) async throws -> Int {
        guard let statusURL else {
            let (data, _) = try await URLSession.shared.data(from: base.appendingPathComponent("_stats"))
            let stats = try JSONSerialization.jsonObject(with: data) as? [String: Any]
            return (stats?["connections"] as? NSNumber)?.intValue ?? -1
        }
        return try accepts(statusURL) - mark - 1
    }

    /// stub_status's `accepts`, read on a connection of its own (a fresh easy handle).
    private func accepts(_ url: URL) throws -> Int {
        let page = String(decoding: RawLibcurl.get(url: url.absoluteString), as: UTF8.self)
        // "Active connections: 1 \nserver accepts handled requests\n 3 3 3 \n…"
        let lines = page.split(separator: "\n")
        guard lines.count > 2, let value = lines[2].split(separator: " ").first.flatMap({ Int($0) }) else {
            throw URLError(.cannotParseResponse)
        }
        return value
    }
}
#endif
