import Courier
import CourierTransfers
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// One traced Courier download over URLSession (`download-1g --impl courier-trace|courier-trace-before`):
// every 5 ms the delegate queue's operation count (chunks handed over and not yet taken), the bytes in
// Courier's stream buffer and the RSS; the peaks and a timeline go to stderr. `-before` runs the
// transport as it was before the delegate queue was bounded (an unbounded queue, a 16 MiB buffer that
// fails on overflow, resumed with `Range` by a loop writing the file like the downloader).

/// What the sampler saw.
final class TraceCounts: @unchecked Sendable {
    let lock = NSLock()
    var streams = 0
    var buffers: [StreamBuffer] = []
    var samples: [(Double, Int, Int, Double)] = []
}

/// Counts the attempts and keeps each attempt's stream buffer for the sampler.
struct CountingTransport: Transport {
    let base: URLSessionTransport
    let counts: TraceCounts
    func send(_ request: URLRequest) async throws -> HTTPResponse { try await base.send(request) }
    func stream(_ request: URLRequest, options: StreamingOptions) async throws -> HTTPResponse {
        let response = try await base.stream(request, options: options)
        counts.lock.withLock {
            counts.streams += 1
            if let buffer = response.body.streamBuffer { counts.buffers.append(buffer) }
        }
        return response
    }
}

/// Resident set size now (`VmRSS`), in MiB.
func currentRSSMiB() -> Double {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
        let kib = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
    else { return -1 }
    return kib / 1024
}

/// `before`: the transport as on main (unbounded delegate queue, 16 MiB buffer that fails on
/// overflow), read by a loop that writes the file like the Downloader; else `client.download`.
func traceDownload(base: URL, bytes: Int64, destination: URL, before: Bool) async throws {
    let counts = TraceCounts()
    var capabilities = TransportCapabilities.current
    if before { capabilities.boundsDelegateQueue = false }
    let transport = URLSessionTransport(
        configuration: URLSessionTransport.defaultConfiguration(), capabilities: capabilities)
    let queue = transport.session.delegateQueue
    let start = Date()
    let sampler = Thread {
        while true {
            let ops = (queue as? BoundedDelegateQueue)?.pendingCount ?? queue.operationCount
            let rss = currentRSSMiB()
            counts.lock.withLock {
                let buffered = counts.buffers.last?.bufferedByteCount ?? 0
                counts.samples.append((Date().timeIntervalSince(start), ops, buffered, rss))
            }
            Thread.sleep(forTimeInterval: 0.005)
        }
    }
    sampler.start()
    let client = APIClient(environment: APIEnvironment(name: "bench", baseURL: base)) {
        $0.transport = CountingTransport(base: transport, counts: counts)
    }
    if before {
        var offset: Int64 = 0
        _ = FileManager.default.createFile(atPath: destination.path, contents: nil)
        let handle = try FileHandle(forWritingTo: destination)
        while offset < bytes {
            var request = Request<Data>.get("/media/\(bytes)")
            if offset > 0 { request = request.header("Range", "bytes=\(offset)-") }
            let streamed = try await client.stream(request, options: StreamingOptions(bufferLimit: 16 << 20))
            do {
                for try await chunk in streamed.body {
                    try handle.write(contentsOf: chunk)
                    offset += Int64(chunk.count)
                }
            } catch NetworkError.streamBufferOverflow {
                continue
            }
        }
        try handle.close()
    } else {
        _ = try await client.download(Request<Void>.get("/media/\(bytes)"), to: destination).value
    }
    let line = counts.lock.withLock { () -> String in
        let peakOps = counts.samples.map(\.1).max() ?? 0
        let peakBuffered = counts.buffers.map(\.peakBufferedByteCount).max() ?? 0
        let peakRSS = counts.samples.map(\.3).max() ?? 0
        let bounded = (queue as? BoundedDelegateQueue).map { " boundedQueuePeakPending=\($0.peakPendingCount)" } ?? ""
        var line =
            "trace\(before ? "-before" : ""): attempts=\(counts.streams) peakDelegateOps=\(peakOps)"
            + " peakStreamBufferMiB=\(String(format: "%.1f", Double(peakBuffered) / 1_048_576))"
            + "\(bounded) peakSampledRSS=\(String(format: "%.0f", peakRSS)) VmHWM=\(String(format: "%.0f", peakRSSMiB()))\n"
        let stride = max(1, counts.samples.count / 12)
        for (index, sample) in counts.samples.enumerated() where index % stride == 0 {
            line += String(
                format: "  t=%.2f ops=%d buffered=%.1fMiB rss=%.0f\n", sample.0, sample.1, Double(sample.2) / 1_048_576,
                sample.3)
        }
        return line
    }
    FileHandle.standardError.write(Data(line.utf8))
}
