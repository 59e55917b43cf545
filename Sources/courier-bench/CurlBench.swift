#if canImport(CourierCurl)
import CCurl
import Courier
import CourierCurl
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// CourierCurl against URLSession and against libcurl used directly, same run, loopback
/// (issue 12, "Figures"): client CPU per small JSON request at concurrency 1 and 32, then 1 GiB
/// downloads and a slow consumer, each in its own process so that its peak RSS is its own.
func runCurlBench(serverURL: URL, requests: Int, rounds: Int) async throws {
    let base = serverURL.appendingPathComponent("ns").appendingPathComponent("bench-core")
    let itemURL = base.appendingPathComponent("items").appendingPathComponent("1")
    let decoder = APIClient.makeDecoder()

    let rawSession = URLSession(configuration: URLSessionTransport.defaultConfiguration())
    let rawURLSession: @Sendable () async throws -> Void = {
        try await rawGet(BenchItem.self, from: itemURL, session: rawSession, decoder: decoder)
    }
    let sessionClient = APIClient(environment: APIEnvironment(name: "bench", baseURL: base)) {
        $0.transport = URLSessionTransport(configuration: benchSessionConfiguration())
    }
    let courierURLSession: @Sendable () async throws -> Void = { _ = try await sessionClient.send(GetBenchItem()) }
    let curl = CurlTransport { $0.httpMaximumConnectionsPerHost = 64 }
    let curlTransport: @Sendable () async throws -> Void = {
        try await rawGet(BenchItem.self, from: itemURL, transport: curl, decoder: decoder)
    }
    let curlClient = APIClient(environment: APIEnvironment(name: "bench", baseURL: base)) {
        $0.transport = CurlTransport { $0.httpMaximumConnectionsPerHost = 64 }
    }
    let courierCurl: @Sendable () async throws -> Void = { _ = try await curlClient.send(GetBenchItem()) }

    if let profile = argument("--profile") {
        // One case alone, for a profiler: --profile curl|courier-curl|libcurl [--concurrency C].
        let concurrency = argument("--concurrency").flatMap(Int.init) ?? 1
        let cpu: Double
        switch profile {
        case "libcurl":
            cpu = RawLibcurl.measure(url: itemURL.absoluteString, requests: requests, concurrency: concurrency, decoder: decoder)
        case "courier-curl":
            cpu = try await measure(requests: requests, concurrency: concurrency, courierCurl).cpuMicrosPerRequest
        default: cpu = try await measure(requests: requests, concurrency: concurrency, curlTransport).cpuMicrosPerRequest
        }
        print(String(format: "%@ at concurrency %d: %.1f µs CPU per request", profile, concurrency, cpu))
        return
    }
    for operation in [rawURLSession, courierURLSession, curlTransport, courierCurl] {
        _ = try await measure(requests: 300, concurrency: 8, operation)
    }
    _ = RawLibcurl.measure(url: itemURL.absoluteString, requests: 300, concurrency: 8, decoder: decoder)

    print("curl: client CPU per request, GET /items/1 + JSON decoding (\(requests) requests x \(rounds) rounds, median µs)")
    print("  conc  raw URLSession  Courier+URLSession  raw libcurl  CurlTransport  Courier+Curl   Curl/URLSession  Curl/libcurl")
    for concurrency in [1, 32] {
        var runs: [[Double]] = Array(repeating: [], count: 5)
        for _ in 0..<rounds {
            runs[0].append(try await measure(requests: requests, concurrency: concurrency, rawURLSession).cpuMicrosPerRequest)
            runs[1].append(try await measure(requests: requests, concurrency: concurrency, courierURLSession).cpuMicrosPerRequest)
            runs[2].append(
                RawLibcurl.measure(url: itemURL.absoluteString, requests: requests, concurrency: concurrency, decoder: decoder))
            runs[3].append(try await measure(requests: requests, concurrency: concurrency, curlTransport).cpuMicrosPerRequest)
            runs[4].append(try await measure(requests: requests, concurrency: concurrency, courierCurl).cpuMicrosPerRequest)
        }
        let m = runs.map(median)
        print(
            String(
                format: "  %4d  %14.1f  %18.1f  %11.1f  %13.1f  %12.1f   %6.2fx (<=0.25)  %5.2fx (<=1.5)",
                concurrency, m[0], m[1], m[2], m[3], m[4], m[4] / m[1], m[3] / m[2]))
    }
    rawSession.finishTasksAndInvalidate()
    try runDownloadCases(serverURL: serverURL)
}

/// URLSession's default configuration with room for 32 parallel requests.
private func benchSessionConfiguration() -> URLSessionConfiguration {
    let configuration = URLSessionTransport.defaultConfiguration()
    configuration.httpMaximumConnectionsPerHost = 64
    return configuration
}

// MARK: - downloads, one process per case

/// The download cases, each run as `courier-bench --only curl-download --case NAME` in a child process.
private let downloadCases: [(name: String, what: String)] = [
    ("raw-urlsession-file", "raw URLSession download(for:) to a file"),
    ("urlsession-stream", "URLSessionTransport.stream, 64 MiB buffer"),
    ("curl-stream", "CurlTransport.stream, 1 MiB buffer"),
    ("courier-curl-stream", "APIClient.stream over CurlTransport"),
    ("raw-libcurl", "libcurl easy handle, C-level calls"),
    ("curl-slow-consumer", "CurlTransport.stream, 1 MiB buffer, consumer at ~100 MB/s (256 MiB)"),
    ("urlsession-slow-consumer", "URLSessionTransport.stream, 1 MiB buffer, same consumer (256 MiB)"),
]

private func runDownloadCases(serverURL: URL) throws {
    print("")
    print("curl: downloads of 1 GiB from the reference server, each case in its own process")
    print("  case                       seconds   MiB/s   peak RSS MiB   result")
    for (name, what) in downloadCases {
        let output = String(
            decoding: try runBenchChild(["--base-url", serverURL.absoluteString, "--only", "curl-download", "--case", name])
                .output,
            as: UTF8.self)
        print("  " + output.trimmingCharacters(in: .whitespacesAndNewlines) + "   (\(what))")
    }
}

/// One download case in this process: prints `name seconds MiB/s peakRSS result`.
func runDownloadCase(_ name: String, serverURL: URL) async {
    let slow = name.hasSuffix("slow-consumer")
    let size = slow ? 256 << 20 : 1 << 30
    let url = serverURL.appendingPathComponent("download").appendingPathComponent(String(size))
    let clock = ContinuousClock()
    let start = clock.now
    var received = 0
    var outcome = "ok"
    do {
        switch name {
        case "raw-urlsession-file":
            let session = URLSession(configuration: URLSessionTransport.defaultConfiguration())
            let (file, _) = try await session.download(for: URLRequest(url: url))
            received = (try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber)?.intValue ?? 0
            try? FileManager.default.removeItem(at: file)
        case "urlsession-stream", "urlsession-slow-consumer":
            let transport = URLSessionTransport()
            let limit = slow ? 1 << 20 : 64 << 20
            let response = try await transport.stream(URLRequest(url: url), options: StreamingOptions(bufferLimit: limit))
            received = try await consume(response.body, slow: slow)
        case "curl-stream", "curl-slow-consumer":
            let transport = CurlTransport()
            let response = try await transport.stream(URLRequest(url: url), options: StreamingOptions())
            received = try await consume(response.body, slow: slow)
        case "courier-curl-stream":
            let client = APIClient(environment: APIEnvironment(name: "bench", baseURL: serverURL)) {
                $0.transport = CurlTransport()
            }
            let streamed = try await client.stream(Request<Data>.get("/download/\(size)"))
            received = try await consume(streamed.body, slow: false)
        case "raw-libcurl":
            received = RawLibcurl.download(url: url.absoluteString)
        default:
            outcome = "unknown case"
        }
    } catch {
        outcome = "failed after \(received >> 20) MiB: \(error)"
    }
    if received != size, outcome == "ok" { outcome = "short: \(received) bytes" }
    let seconds = (clock.now - start) / .seconds(1)
    let label = name.padding(toLength: 26, withPad: " ", startingAt: 0)
    print(
        String(
            format: "%@ %7.2f  %6.0f   %12.1f   %@", label, seconds, Double(received) / 1_048_576 / seconds, peakRSSMiB(),
            outcome))
}

/// Reads a body to the end; a slow consumer pauses 0.6 ms per 64 KiB (about 100 MB/s).
private func consume(_ body: MessageBody?, slow: Bool) async throws -> Int {
    guard let body else { return 0 }
    var total = 0
    var sinceNap = 0
    for try await chunk in body {
        total += chunk.count
        sinceNap += chunk.count
        if slow, sinceNap >= 64 << 10 {
            sinceNap = 0
            try await Task.sleep(for: .microseconds(600))
        }
    }
    return total
}

// MARK: - libcurl used directly

/// libcurl from C-level calls only: the floor CourierCurl is measured against.
enum RawLibcurl {
    /// One body being collected.
    final class Sink {
        var body = Data()
        var count = 0
    }

    static let collect: ccurl_data_callback = { buffer, size, count, userdata in
        guard let userdata else { return 0 }
        let sink = Unmanaged<Sink>.fromOpaque(userdata).takeUnretainedValue()
        sink.body.append(UnsafeRawBufferPointer(start: buffer, count: size * count).bindMemory(to: UInt8.self))
        return size * count
    }

    static let discard: ccurl_data_callback = { _, size, count, userdata in
        guard let userdata else { return 0 }
        Unmanaged<Sink>.fromOpaque(userdata).takeUnretainedValue().count += size * count
        return size * count
    }

    /// CPU µs per request: `concurrency` reused easy handles on one multi handle, each response
    /// collected and JSON-decoded like the other cases, driven on this thread. `hostLimit` is
    /// `CURLMOPT_MAX_HOST_CONNECTIONS` (0: none, libcurl's default). `decode` decodes a body
    /// (a `BenchItem` when `nil`).
    static func measure(
        url: String, requests: Int, concurrency: Int, decoder: JSONDecoder, hostLimit: Int = 0,
        decode: ((Data) throws -> Void)? = nil
    ) -> Double {
        _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        let multi = curl_multi_init()
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, hostLimit)
        var sinks: [UnsafeMutableRawPointer: Sink] = [:]
        let headers = curl_slist_append(nil, "Accept: application/json")
        for _ in 0..<concurrency {
            guard let handle = curl_easy_init() else { continue }
            let sink = Sink()
            sinks[handle] = sink
            _ = ccurl_easy_setopt_string(handle, CURLOPT_URL, url)
            _ = ccurl_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
            _ = ccurl_easy_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, "")
            _ = ccurl_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headers)
            _ = ccurl_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, collect)
            _ = ccurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(sink).toOpaque())
        }
        let startCPU = processCPUSeconds()
        var started = 0
        var finished = 0
        for handle in sinks.keys where started < requests {
            curl_multi_add_handle(multi, handle)
            started += 1
        }
        while finished < started {
            var running: Int32 = 0
            curl_multi_perform(multi, &running)
            var left: Int32 = 0
            while let message = curl_multi_info_read(multi, &left) {
                guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle, let sink = sinks[handle]
                else { continue }
                curl_multi_remove_handle(multi, handle)
                if let decode { try? decode(sink.body) } else { _ = try? decoder.decode(BenchItem.self, from: sink.body) }
                sink.body = Data()
                finished += 1
                if started < requests {
                    curl_multi_add_handle(multi, handle)
                    started += 1
                }
            }
            var ready: Int32 = 0
            if finished < started { curl_multi_poll(multi, nil, 0, 1000, &ready) }
        }
        let cpu = processCPUSeconds() - startCPU
        for handle in sinks.keys { curl_easy_cleanup(handle) }
        curl_slist_free_all(headers)
        curl_multi_cleanup(multi)
        return cpu / Double(max(1, finished)) * 1_000_000
    }

    /// The body of `GET url`, on a new easy handle (so on a connection of its own).
    static func get(url: String) -> Data { perform(url: url, writing: collect)?.body ?? Data() }

    /// Downloads `url` with one easy handle, counting (not keeping) the bytes.
    static func download(url: String) -> Int { perform(url: url, writing: discard)?.count ?? 0 }

    /// `GET url` on a new easy handle, the body passed to `write` (`collect` or `discard`):
    /// the sink it wrote into, or `nil` when libcurl gave no handle.
    private static func perform(url: String, writing write: ccurl_data_callback) -> Sink? {
        _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        guard let handle = curl_easy_init() else { return nil }
        let sink = Sink()
        _ = ccurl_easy_setopt_string(handle, CURLOPT_URL, url)
        _ = ccurl_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, write)
        _ = ccurl_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(sink).toOpaque())
        _ = curl_easy_perform(handle)
        curl_easy_cleanup(handle)
        return sink
    }
}
#endif
