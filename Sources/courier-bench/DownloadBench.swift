import Courier
import CourierTransfers
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(CourierCurl)
import CourierCurl
#endif

// The 1 GiB download: Courier's `client.download` over URLSession and over CurlTransport against
// raw URLSession `download(for:)`, same server route (bytes generated on the fly), each run in its
// own child process so that its peak RSS (`peakRSSMiB()` in BenchSupport.swift: VmHWM on Linux) is
// its own. Every implementation runs `--download-runs` times (20 by default), interleaved, and the
// table gives the minimum, median and maximum peak RSS: a bound holds only if the maximum keeps it.
//   courier-bench --only download [--download-bytes N] [--download-runs R]   parent: the table
//       [--slow-stream-bytes N] [--slow-stream-runs R]   then the slow-stream table (below)
//   courier-bench download-1g --impl courier|courier-curl|urlsession [--download-bytes N]   one child, one JSON line
//   courier-bench download-1g --impl courier-trace|courier-trace-before   one traced Courier download over URLSession
//       (DownloadTrace.swift: delegate-queue backlog, stream-buffer bytes and RSS over time, on stderr)

/// Child: downloads `bytes` once with `impl`, checks the size, prints a `ChildRun` as JSON.
func runDownloadChild(serverURL: URL, impl: String, bytes: Int64) async throws {
    let namespace = "bench-dl-\(UUID().uuidString.prefix(8).lowercased())"
    let base = serverURL.appendingPathComponent("ns").appendingPathComponent(namespace)
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-\(namespace)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let destination = folder.appendingPathComponent("file.bin")
    let start = ContinuousClock.now
    if impl.hasPrefix("slow-stream") {
        try await runSlowStreamChild(base: base, impl: impl, bytes: bytes, start: start)
        return
    }
    switch impl {
    case "courier":
        let client = APIClient(environment: APIEnvironment(name: "bench", baseURL: base))
        _ = try await client.download(Request<Void>.get("/media/\(bytes)"), to: destination).value
    #if canImport(CourierCurl)
    case "courier-curl":
        let client = APIClient(environment: APIEnvironment(name: "bench", baseURL: base)) { $0.transport = CurlTransport() }
        _ = try await client.download(Request<Void>.get("/media/\(bytes)"), to: destination).value
    #endif
    case "courier-trace", "courier-trace-before":
        try await traceDownload(base: base, bytes: bytes, destination: destination, before: impl.hasSuffix("before"))
    case "urlsession":
        let session = URLSession(configuration: .ephemeral)
        let (temporary, response) = try await session.download(
            for: URLRequest(url: base.appendingPathComponent("media/\(bytes)")))
        guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw URLError(.badServerResponse) }
        try FileManager.default.moveItem(at: temporary, to: destination)
    default:
        throw URLError(.unsupportedURL)
    }
    let elapsed = start.duration(to: .now)
    let size = (try FileManager.default.attributesOfItem(atPath: destination.path)[.size] as? NSNumber)?.int64Value ?? -1
    guard size == bytes else {
        throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "\(impl): \(size) bytes, expected \(bytes)"])
    }
    let seconds = elapsed.benchSeconds
    let run = ChildRun(impl: impl, bytes: bytes, seconds: seconds, peakRSSMiB: peakRSSMiB())
    try printJSONLine(run)
}

/// Child: streams `bytes` with `client.stream` (default options: a 1 MiB buffer) and reads them
/// slowly, a 1 ms pause per 256 KiB: CurlTransport pauses the transfer; URLSession on Linux, which
/// cannot, ends the body with `streamBufferOverflow` (the outcome). Either way memory stays bounded.
private func runSlowStreamChild(base: URL, impl: String, bytes: Int64, start: ContinuousClock.Instant) async throws {
    let client = APIClient(environment: APIEnvironment(name: "bench", baseURL: base)) {
        #if canImport(CourierCurl)
        if impl.hasSuffix("curl") { $0.transport = CurlTransport() }
        #endif
    }
    let streamed = try await client.stream(
        Request<Data>.get("/stream/bytes", query: ["size": "\(bytes)", "chunk": "262144"]), options: StreamingOptions())
    var read: Int64 = 0
    var nextPause: Int64 = 256 << 10
    var outcome: String?
    do {
        for try await chunk in streamed.body {
            read += Int64(chunk.count)
            if read >= nextPause {
                nextPause += 256 << 10
                try await Task.sleep(for: .milliseconds(1))
            }
        }
    } catch NetworkError.streamBufferOverflow {
        outcome = "overflow after \(read >> 20) MiB"
    }
    if outcome == nil && read != bytes {
        throw CocoaError(.fileReadCorruptFile, userInfo: [NSLocalizedDescriptionKey: "\(impl): \(read) bytes, expected \(bytes)"])
    }
    let elapsed = start.duration(to: .now)
    let seconds = elapsed.benchSeconds
    let run = ChildRun(impl: impl, bytes: read, seconds: seconds, peakRSSMiB: peakRSSMiB(), outcome: outcome)
    try printJSONLine(run)
}

/// Parent: the slow-stream case, `rounds` runs per transport, interleaved; min/median/max peak RSS.
func runSlowStreamBench(serverURL: URL, bytes: Int64, runs rounds: Int) {
    #if canImport(CourierCurl)
    let implementations = ["slow-stream", "slow-stream-curl"]
    #else
    let implementations = ["slow-stream"]
    #endif
    print(
        "Stream of \(bytes >> 20) MiB read slowly (1 ms per 256 KiB) with client.stream, default 1 MiB buffer "
            + "(\(rounds) runs per transport, each in its own process)")
    var runs: [String: [ChildRun]] = [:]
    var failures: [String: Int] = [:]
    for _ in 0..<max(1, rounds) {
        for impl in implementations {
            do { runs[impl, default: []].append(try runDownloadChildProcess(impl, serverURL, bytes)) } catch {
                failures[impl, default: 0] += 1
                print("  \(impl) failed: \(error.localizedDescription)")
            }
        }
    }
    print("  impl              runs failed   outcome                        peak RSS MiB min / median / max")
    for impl in implementations {
        let measured = runs[impl] ?? []
        let rss = measured.map(\.peakRSSMiB).sorted()
        guard let low = rss.first, let high = rss.last else { continue }
        let outcomes = Dictionary(grouping: measured, by: { $0.outcome.map { _ in "overflow" } ?? "all bytes" })
            .map { "\($0.value.count)× \($0.key)" }.sorted().joined(separator: ", ")
        let failed = failures[impl] ?? 0
        print(
            "  " + impl.padding(toLength: 17, withPad: " ", startingAt: 0)
                + String(format: "%5d %6d   ", measured.count, failed)
                + outcomes.padding(toLength: 30, withPad: " ", startingAt: 0)
                + String(
                    format: " %8.1f / %6.1f / %6.1f%@", low, rss[rss.count / 2], high,
                    high > 64 || failed > 0 ? "   MISSES the 64 MiB goal" : ""))
    }
}

/// The implementations the parent runs, raw URLSession first.
private var downloadImplementations: [String] {
    #if canImport(CourierCurl)
    ["urlsession", "courier", "courier-curl"]
    #else
    ["urlsession", "courier"]
    #endif
}

/// Parent: `runs` rounds, each running one child per implementation; then the table.
func runDownloadBench(serverURL: URL, bytes: Int64, runs rounds: Int = 20) throws {
    print(
        "Download of \(bytes >> 20) MiB to a file (bytes generated by the server; each run in its own process, "
            + "\(rounds) runs per implementation, interleaved)")
    var runs: [String: [ChildRun]] = [:]
    var failures: [String: [String]] = [:]
    for _ in 0..<max(1, rounds) {
        for impl in downloadImplementations {
            // A failed download is a run that missed the goal, not the end of the table.
            do { runs[impl, default: []].append(try runDownloadChildProcess(impl, serverURL, bytes)) } catch {
                failures[impl, default: []].append(error.localizedDescription)
            }
        }
    }
    print("  impl           runs failed   median s   median MiB/s   peak RSS MiB min / median / max")
    for impl in downloadImplementations {
        let measured = runs[impl] ?? []
        let failed = failures[impl]?.count ?? 0
        let seconds = measured.map(\.seconds).sorted()
        let rss = measured.map(\.peakRSSMiB).sorted()
        guard let low = rss.first, let high = rss.last else {
            print("  " + impl.padding(toLength: 14, withPad: " ", startingAt: 0) + String(format: "%5d %6d", 0, failed))
            continue
        }
        let medianSeconds = seconds[seconds.count / 2]
        let rate = Double(bytes) / 1_048_576 / medianSeconds
        print(
            "  " + impl.padding(toLength: 14, withPad: " ", startingAt: 0)
                + String(
                    format: "%5d %6d %10.2f %14.0f   %8.1f / %6.1f / %6.1f%@", measured.count, failed, medianSeconds, rate,
                    low, rss[rss.count / 2], high, high > 64 || failed > 0 ? "   MISSES the 64 MiB goal" : ""))
    }
    for (impl, errors) in failures.sorted(by: { $0.key < $1.key }) {
        print("  \(impl) failed: \(errors.first ?? "")")
    }
    print("")
    runSlowStreamBench(
        serverURL: serverURL, bytes: argument("--slow-stream-bytes").flatMap(Int64.init) ?? (256 << 20),
        runs: argument("--slow-stream-runs").flatMap(Int.init) ?? rounds)
}

/// Runs one child and reads its JSON line.
private func runDownloadChildProcess(_ impl: String, _ serverURL: URL, _ bytes: Int64) throws -> ChildRun {
    let (output, status) = try runBenchChild(
        ["download-1g", "--impl", impl, "--base-url", serverURL.absoluteString, "--download-bytes", "\(bytes)"])
    guard status == 0, let run = lastJSONLine(of: output, as: ChildRun.self) else {
        throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "child \(impl) failed (\(status))"])
    }
    return run
}
