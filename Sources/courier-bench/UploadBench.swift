import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTransfers

/// Upload: a multipart/form-data body with one file part of `megabytes` MiB read from disk, sent
/// to the reference server's strict multipart parser (which checks the structure and hashes the
/// part), by Courier (`client.upload(.multipart(form))`, streamed part by part from the file)
/// and by raw URLSession the way the iOS guides do it (the multipart body written to a file
/// first, then `upload(for:fromFile:)`), in the same run. Peak RSS is sampled every 20 ms during
/// each transfer (Linux: VmRSS); the goal is ≤ 64 MiB for Courier.
///
/// - Throws: When the server does not see the exact file bytes.
func runUploadBench(serverURL: URL, megabytes: Int) async throws {
    print("\nupload: \(megabytes) MiB multipart/form-data from disk (POST /uploads/multipart, strict parser)")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-up-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("video.bin")
    try writePatternFile(file, megabytes: megabytes)
    let bytes = Int64(megabytes) << 20
    let base = serverURL.appendingPathComponent("ns").appendingPathComponent(
        "bench-up-\(UUID().uuidString.prefix(8).lowercased())")

    var form = MultipartForm()
    try form.addField(named: "title", value: "bench")
    try form.addFile(named: "video", fileURL: file, contentType: "application/octet-stream")

    // Courier: streamed from the file, progress followed.
    let client = APIClient(environment: APIEnvironment(name: "bench", baseURL: base))
    let courier = try await measureUpload {
        let upload = client.upload(
            Request<Data>(method: .post, path: "/uploads/multipart", body: .multipart(form)) { r, _ in r.data })
        var updates = 0
        for await _ in upload.progress { updates += 1 }
        let body = try await upload.value
        return (body, updates)
    }

    // Raw URLSession: write the body to a file, then upload(for:fromFile:).
    let session = URLSession(configuration: .ephemeral)
    let raw = try await measureUpload {
        let bodyFile = directory.appendingPathComponent("body.multipart")
        try form.writeBody(to: bodyFile)
        defer { try? FileManager.default.removeItem(at: bodyFile) }
        var request = URLRequest(url: base.appendingPathComponent("uploads/multipart"))
        request.httpMethod = "POST"
        request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        let (body, _) = try await session.upload(for: request, fromFile: bodyFile)
        return (body, 0)
    }

    for (name, result) in [("courier", courier), ("urlsession", raw)] {
        guard let report = try JSONSerialization.jsonObject(with: result.body) as? [String: Any],
            let parts = report["parts"] as? [[String: Any]], parts.count == 2,
            (parts[1]["length"] as? NSNumber)?.int64Value == bytes
        else { throw BenchFailure(description: "\(name): the server did not parse the whole form") }
        let mibPerSecond = Double(bytes) / 1_048_576 / result.seconds
        print(
            "  \(name.padding(toLength: 11, withPad: " ", startingAt: 0)) \(String(format: "%7.1f", mibPerSecond)) MiB/s"
                + "  \(String(format: "%6.2f", result.seconds)) s  peak RSS \(result.peakRSS >> 20) MiB"
                + (name == "courier" ? "  (\(result.updates) progress values)" : "  (body file written first)"))
    }
    print("  courier peak RSS ≤ 64 MiB: \(courier.peakRSS <= 64 << 20 ? "yes" : "NO")")
}

private struct UploadMeasurement {
    var body: Data
    var updates: Int
    var seconds: Double
    var peakRSS: Int
}

private func measureUpload(_ run: () async throws -> (Data, Int)) async throws -> UploadMeasurement {
    let peak = UploadRSSSampler()
    peak.start()
    let start = ContinuousClock.now
    let (body, updates) = try await run()
    let elapsed = ContinuousClock.now - start
    return UploadMeasurement(
        body: body, updates: updates,
        seconds: elapsed.benchSeconds, peakRSS: peak.stop())
}

/// A file of `megabytes` MiB of a repeating pattern, written in 1 MiB blocks.
private func writePatternFile(_ url: URL, megabytes: Int) throws {
    _ = FileManager.default.createFile(atPath: url.path, contents: nil)
    let handle = try FileHandle(forWritingTo: url)
    let block = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    do {
        for _ in 0..<megabytes { try handle.write(contentsOf: block) }
    } catch {
        _ = Result { try handle.close() }  // the write's failure is the one to report
        throw error
    }
    try handle.close()  // a deferred write failure (a full disk) surfaces here
}

/// Samples the process's resident set size every 20 ms on its own thread (Linux: `VmRSS` of
/// /proc/self/status; elsewhere nothing is sampled and the peak is 0).
private final class UploadRSSSampler: @unchecked Sendable {
    // @unchecked Sendable: `peak` and `running` are only touched with `lock` held.
    private let lock = NSLock()
    private var peak = 0
    private var running = true

    func start() {
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                let rss = Self.currentRSS()
                lock.withLock { peak = max(peak, rss) }
                Thread.sleep(forTimeInterval: 0.02)
            }
        }
        thread.start()
    }

    func stop() -> Int {
        let rss = Self.currentRSS()
        return lock.withLock {
            running = false
            return max(peak, rss)
        }
    }

    static func currentRSS() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") })
        else { return 0 }
        let kilobytes = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return kilobytes << 10
    }
}
