import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// What several benches share: the reference item and its endpoint, the raw (Courier-less) request
// the Courier figures are compared with, an in-memory transport, and the CPU, RSS and median
// measurements.

/// The item the reference server returns for `GET /items/1`.
struct BenchItem: Codable, Sendable {
    let id: Int
    let name: String
    let price: Double
    let status: String
    let tags: [String]
    let createdAt: Date
    let updatedAt: Date
}

/// `GET /items/1` as a Courier endpoint.
struct GetBenchItem: Endpoint {
    typealias Response = BenchItem
    var path: String { "/items/1" }
    var pathTemplate: String? { "/items/{id}" }
}

/// `GET /items`: the reference server's 2 KB list (``pipelineCostBody()`` in memory).
struct ListBenchItems: Endpoint {
    typealias Response = [BenchItem]
    var path: String { "/items" }
    var pathTemplate: String? { "/items" }
}

/// `GET url` as code without Courier writes it, over `session`: `Accept: application/json`, the
/// status checked (200, else `URLError(.badServerResponse)`) and the body decoded as `T`.
func rawGet<T: Decodable>(_ type: T.Type, from url: URL, session: URLSession, decoder: JSONDecoder) async throws {
    var request = URLRequest(url: url)
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    let (data, response) = try await session.data(for: request)
    guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
    _ = try decoder.decode(type, from: data)
}

/// The same request sent straight to `transport` (e.g. a `CurlTransport`), without a client.
func rawGet<T: Decodable>(_ type: T.Type, from url: URL, transport: some Transport, decoder: JSONDecoder) async throws {
    var request = URLRequest(url: url)
    request.setValue("application/json", forHTTPHeaderField: "Accept")
    let response = try await transport.send(request)
    guard response.statusCode == 200 else { throw URLError(.badServerResponse) }
    _ = try decoder.decode(type, from: response.data)
}

/// A transport that answers every request at once from memory with `body` as JSON, so a bench sees
/// the client's own CPU and nothing else.
struct InstantTransport: Transport {
    let body: Data
    func send(_ request: URLRequest) async throws -> HTTPResponse {
        HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: body, url: request.url)
    }
}

/// A metrics sink that drops every event: what metrics cost when nobody reads them.
struct DroppingMetricsSink: NetworkMetricsSink {
    func record(_ event: NetworkMetricsEvent) {}
}

/// An event monitor that drops every event: what attaching one costs.
struct DroppingEventMonitor: NetworkEventMonitor {
    func receive(_ event: NetworkEvent) {}
}

/// CPU time (user + system) this process has used so far, in seconds (getrusage, RUSAGE_SELF).
/// The servers run in other processes, so this counts only the client's work.
func processCPUSeconds() -> Double {
    let usage = processUsage()
    func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1_000_000 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}

/// `getrusage(RUSAGE_SELF)`: this process, every thread.
private func processUsage() -> rusage {
    var usage = rusage()
    #if os(Linux)
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    #else
    getrusage(RUSAGE_SELF, &usage)
    #endif
    return usage
}

/// Context switches of this process so far (`getrusage`, every thread): `voluntary` when a thread
/// waited (a futex, a poll), `involuntary` when the scheduler took the CPU from a running thread.
func processContextSwitches() -> (voluntary: Int, involuntary: Int) {
    let usage = processUsage()
    return (usage.ru_nvcsw, usage.ru_nivcsw)
}

/// CPU time this process has used so far, in seconds, from the scheduler's own accounting
/// (`CLOCK_PROCESS_CPUTIME_ID`, nanoseconds): precise enough for batches of a few milliseconds,
/// where `getrusage` may count whole clock ticks.
func processCPUTimeSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1_000_000_000
}

/// One measured run: CPU microseconds per request and wall-clock requests per second.
struct Measurement {
    let cpuMicrosPerRequest: Double
    let requestsPerSecond: Double
}

/// Runs `operation` `requests` times split over `concurrency` workers and measures the client's
/// CPU time per request and the throughput.
func measure(
    requests: Int, concurrency: Int, _ operation: @escaping @Sendable () async throws -> Void
) async throws -> Measurement {
    let perWorker = max(1, requests / concurrency)
    let startCPU = processCPUSeconds()
    let startWall = ContinuousClock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<concurrency {
            group.addTask {
                for _ in 0..<perWorker { try await operation() }
            }
        }
        try await group.waitForAll()
    }
    let wall = ContinuousClock.now - startWall
    let cpu = processCPUSeconds() - startCPU
    let total = Double(perWorker * concurrency)
    let wallSeconds = wall.benchSeconds
    return Measurement(cpuMicrosPerRequest: cpu / total * 1_000_000, requestsPerSecond: total / wallSeconds)
}

/// The median of `values` (the upper one of an even count); 0 for none.
func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted[sorted.count / 2]
}

/// Peak resident set size of this process so far, in MiB. On Linux `VmHWM` of /proc/self/status:
/// `ru_maxrss` would carry the spawning parent's peak over `execve`. Elsewhere `ru_maxrss` (bytes
/// on Darwin).
func peakRSSMiB() -> Double {
    #if os(Linux)
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
        let kib = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
    else { return -1 }
    return kib / 1024
    #else
    var usage = rusage()
    getrusage(RUSAGE_SELF, &usage)
    return Double(usage.ru_maxrss) / 1_048_576
    #endif
}

/// A bench that could not measure what it set out to (the server disagreed, a run fell short).
struct BenchFailure: Error, CustomStringConvertible {
    let description: String
}

/// What one child process of the bench measured: the one JSON line it prints on standard output.
struct ChildRun: Codable {
    /// The implementation (and case) it ran, e.g. `courier-curl` or `courier:ndjson`.
    var impl: String
    var bytes: Int64
    var seconds: Double
    /// Its peak resident set size (``peakRSSMiB()``).
    var peakRSSMiB: Double
    /// How it ended when not with its last byte: the overflow of a transport that cannot pause,
    /// or the error that stopped it.
    var outcome: String?
    /// NDJSON records read (the stream bench's record case).
    var records = 0
}

/// Runs this bench again as a child process with `arguments` and returns what it printed on
/// standard output and its exit status; its standard error is this process's. The download and
/// stream cases each run in a child of their own, so that a peak RSS is that case's alone.
func runBenchChild(_ arguments: [String]) throws -> (output: Data, status: Int32) {
    let child = Process()
    child.executableURL = Bundle.main.executableURL ?? URL(fileURLWithPath: CommandLine.arguments[0])
    child.arguments = arguments
    let pipe = Pipe()
    child.standardOutput = pipe
    try child.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    child.waitUntilExit()
    return (output, child.terminationStatus)
}

/// The last line of a child's output decoded from JSON as `T`, or `nil` when there is none.
func lastJSONLine<T: Decodable>(of output: Data, as type: T.Type) -> T? {
    output.split(separator: 0x0A).last.flatMap { try? JSONDecoder().decode(T.self, from: Data($0)) }
}

/// Prints `value` as one line of JSON on standard output: a child's result, which the parent reads
/// with ``lastJSONLine(of:as:)``.
/// - Throws: `EncodingError` when `value` cannot be encoded (nothing is printed).
func printJSONLine(_ value: some Encodable) throws {
    print(String(decoding: try JSONEncoder().encode(value), as: UTF8.self))
}

extension Duration {
    /// The duration in seconds, as a `Double` (attoseconds included).
    var benchSeconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
