import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierCurl

// Streamed bodies (issue 10): throughput and peak RSS of a 1 GiB body and of 1 M NDJSON records,
// Courier's `APIClient.stream` against raw URLSession (a data task whose delegate counts or splits
// the bytes itself). Peak RSS is per process, so each case runs in its own child process:
//   courier-bench --stream-child <courier|urlsession>:<bytes|ndjson> --base-url URL

/// One streaming record as the reference server's `/stream/ndjson` sends it.
struct StreamRecord: Decodable, Sendable {
    let id: Int
    let name: String
}

/// The 1 GiB and 1 M-record cases (override with `--stream-bytes`, `--stream-records`).
enum StreamCase: String, CaseIterable {
    case bytes, ndjson
}

/// Parent: runs every (implementation, case) pair `--stream-runs` times (20 by default), each run in
/// a child process, the pairs interleaved run by run; prints the median time and the min / median /
/// max peak RSS per pair (the goal is on the maximum).
func runStreamBench(serverURL: URL) async throws {
    let bytes = argument("--stream-bytes").flatMap(Int.init) ?? 1 << 30
    let records = argument("--stream-records").flatMap(Int.init) ?? 1_000_000
    let runs = max(1, argument("--stream-runs").flatMap(Int.init) ?? 20)
    let implementations = ["urlsession", "courier", "courier-curl"]
    print(
        "Streamed bodies: \(bytes) bytes and \(records) NDJSON records, \(runs) runs per case, each in its own process,"
            + " interleaved (peak RSS goal < 64 MiB)")
    var results: [String: [ChildRun]] = [:]
    for _ in 0..<runs {
        for kind in StreamCase.allCases {
            for implementation in implementations {
                let result = try runChild(
                    [
                        "--stream-child", "\(implementation):\(kind.rawValue)", "--base-url", serverURL.absoluteString,
                        "--stream-bytes", "\(bytes)", "--stream-records", "\(records)",
                    ])
                results["\(implementation):\(kind.rawValue)", default: []].append(result)
            }
        }
    }
    print("case     implementation   runs failed   median s   median MiB/s or rec/s   peak RSS MiB min / median / max")
    for kind in StreamCase.allCases {
        for implementation in implementations {
            let all = results["\(implementation):\(kind.rawValue)"] ?? []
            let measured = all.filter { $0.outcome == nil }
            let seconds = measured.map(\.seconds).sorted()
            let rss = all.map(\.peakRSSMiB).sorted()
            guard !seconds.isEmpty, !rss.isEmpty else {
                print("\(kind.rawValue) \(implementation): every run failed: \(all.first?.outcome ?? "no run")")
                continue
            }
            let median = seconds[seconds.count / 2]
            let amount = kind == .bytes ? Double(bytes) / 1_048_576 : Double(records)
            let rate = String(format: "%12.0f %@", amount / median, kind == .bytes ? "MiB/s" : "rec/s")
            let label = ["courier": "Courier/URLSess.", "courier-curl": "Courier/Curl"][implementation] ?? "raw URLSession"
            print(
                kind.rawValue.padding(toLength: 9, withPad: " ", startingAt: 0)
                    + label.padding(toLength: 17, withPad: " ", startingAt: 0)
                    + String(
                        format: "%4d %6d %10.2f   %@      %8.1f / %6.1f / %6.1f", all.count, all.count - measured.count, median,
                        rate,
                        rss[0], rss[rss.count / 2], rss[rss.count - 1])
                    + (all.first { $0.outcome != nil }?.outcome.map { "   first failure: \($0)" } ?? ""))
        }
    }
}

private func runChild(_ arguments: [String]) throws -> ChildRun {
    let (output, status) = try runBenchChild(arguments)
    return lastJSONLine(of: output, as: ChildRun.self)
        ?? ChildRun(impl: arguments.first ?? "", bytes: 0, seconds: 0, peakRSSMiB: 0, outcome: "child exited \(status)")
}

/// Child: runs one case and prints its `ChildRun` as one JSON line.
func runStreamChild(_ spec: String, serverURL: URL) async {
    let parts = spec.split(separator: ":").map(String.init)
    let bytes = argument("--stream-bytes").flatMap(Int.init) ?? 1 << 30
    let records = argument("--stream-records").flatMap(Int.init) ?? 1_000_000
    let base = serverURL.appendingPathComponent("ns").appendingPathComponent("bench-stream")
    let kind = StreamCase(rawValue: parts.count == 2 ? parts[1] : "") ?? .bytes
    var components = URLComponents(
        url: base.appendingPathComponent(kind == .bytes ? "stream/bytes" : "stream/ndjson"), resolvingAgainstBaseURL: false)
    components?.queryItems =
        kind == .bytes
        ? [URLQueryItem(name: "size", value: "\(bytes)"), URLQueryItem(name: "chunk", value: "262144")]
        : [URLQueryItem(name: "count", value: "\(records)")]
    guard let url = components?.url else { return }
    let start = ContinuousClock.now
    var result = ChildRun(impl: spec, bytes: 0, seconds: 0, peakRSSMiB: 0)
    do {
        let (bytes, records) =
            parts.first == "courier" || parts.first == "courier-curl"
            ? try await courierStream(url: url, base: base, kind: kind, overCurl: parts.first == "courier-curl")
            : try await RawStreamDelegate.run(url: url, kind: kind)
        (result.bytes, result.records) = (Int64(bytes), records)
    } catch {
        result.outcome = "\(error)"
    }
    let elapsed = ContinuousClock.now - start
    result.seconds = elapsed.benchSeconds
    result.peakRSSMiB = peakRSSMiB()
    try? printJSONLine(result)
}

private func courierStream(url: URL, base: URL, kind: StreamCase, overCurl: Bool) async throws -> (Int, Int) {
    let client = APIClient(environment: APIEnvironment(name: "bench", baseURL: base)) {
        if overCurl { $0.transport = CurlTransport() }
    }
    let path = String(url.path.dropFirst(base.path.count))
    let query = Query(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems ?? [])
    // CurlTransport pauses the transfer at the default 1 MiB. URLSession on Linux cannot pause: a
    // consumer slower than the network (decoding NDJSON is) needs room for the backlog, 32 MiB here.
    let options = overCurl ? StreamingOptions() : StreamingOptions(bufferLimit: 32 << 20)
    let streamed = try await client.stream(Request<Data>.get(path, query: query), options: options)
    switch kind {
    case .bytes:
        var total = 0
        for try await chunk in streamed.body { total += chunk.count }
        return (total, 0)
    case .ndjson:
        var count = 0
        for try await _ in streamed.body.ndjson(as: StreamRecord.self) { count += 1 }
        return (0, count)
    }
}

/// Raw URLSession: a data task whose delegate counts the bytes, or splits lines and decodes each
/// with `JSONDecoder` — what an app would write by hand.
private final class RawStreamDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let kind: StreamCase
    private var bytes = 0
    private var records = 0
    private var pending = Data()
    private let decoder = JSONDecoder()
    private var failure: (any Error)?
    private let done = DispatchSemaphore(value: 0)

    init(kind: StreamCase) { self.kind = kind }

    static func run(url: URL, kind: StreamCase) async throws -> (Int, Int) {
        let delegate = RawStreamDelegate(kind: kind)
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        let session = URLSession(
            configuration: URLSessionTransport.defaultConfiguration(), delegate: delegate, delegateQueue: queue)
        session.dataTask(with: url).resume()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                delegate.done.wait()
                continuation.resume()
            }
        }
        session.finishTasksAndInvalidate()
        if let failure = delegate.failure { throw failure }
        return (delegate.bytes, delegate.records)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        bytes += data.count
        guard kind == .ndjson else { return }
        pending.append(data)
        var start = pending.startIndex
        while let newline = pending[start...].firstIndex(of: 0x0A) {
            if newline > start, (try? decoder.decode(StreamRecord.self, from: pending[start..<newline])) != nil { records += 1 }
            start = newline + 1
        }
        pending.removeSubrange(pending.startIndex..<start)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        failure = error
        done.signal()
    }
}
