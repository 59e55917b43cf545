import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// A download's size in the logs and the metrics event is the bytes written to the file.
@Suite("Download byte counts (logs, metrics)")
struct DownloadByteCountTests {
    @Test("a download logs and measures the bytes written, not 0")
    func downloadCounts() async throws {
        let payload = String(repeating: "0123456789abcdef", count: 64)  // 1 KiB in 4 chunks
        let parts = stride(from: 0, to: payload.count, by: 256).map {
            String(payload.dropFirst($0).prefix(256))
        }
        var head = HTTPResponse(statusCode: 200, headers: ["Content-Length": "\(payload.utf8.count)"])
        head.body = MessageBody(parts.async, length: .known(Int64(payload.utf8.count)))
        let logger = CapturingNetworkLogger()
        let metrics = CapturingMetricsSink()
        let client = TransfersFixture.client(StubTransport(responses: [.success(head)])) {
            $0.interceptors = [RequestIDInterceptor(), LoggingInterceptor(logger: logger), MetricsInterceptor(sink: metrics)]
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-count-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("file.bin")
        _ = try await client.download(Request<Void>.get("/media/1024"), to: destination).value
        #expect(try Data(contentsOf: destination).count == 1024)
        #expect(metrics.events.first?.responseBodyBytes == 1024)
        #expect(logger.entries.contains { $0.event == .bodyEnd && $0.summary.contains("body 1.0 KiB in") })
    }
}

extension Array where Element == String {
    /// The strings as UTF-8 chunks, one per `next()`.
    fileprivate var async: AsyncStream<Data> {
        AsyncStream { continuation in
            for chunk in self { continuation.yield(Data(chunk.utf8)) }
            continuation.finish()
        }
    }
}
