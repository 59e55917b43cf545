import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTransfers
import Testing

/// Streamed request bodies are sent in constant memory, whatever their size.
@Suite("Upload memory")
struct UploadMemoryTests {
    /// Peak RSS checks: one test at a time (`scripts/test`'s quiet pass), so the process's peak is this test's.
    @Suite("on a quiet machine") struct OnAQuietMachine {
        struct Reply: Decodable {
            var bytes: Int
        }

        /// A file of `size` bytes of a repeating pattern, written 1 MiB at a time.
        static func file(size: Int) throws -> URL {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-memory-\(UUID().uuidString)")
            guard FileManager.default.createFile(atPath: url.path, contents: nil) else { throw CocoaError(.fileWriteUnknown) }
            let handle = try FileHandle(forWritingTo: url)
            defer { try? handle.close() }
            let chunk = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
            for _ in 0..<(size >> 20) { try handle.write(contentsOf: chunk) }
            return url
        }

        /// Measured before the fix over CurlTransport: a 1 GiB upload (file, multipart or stream)
        /// peaked at 1103 MiB RSS against 79-89 MiB for 10 MiB; the body pump's `Data` buffer
        /// dropped taken bytes with `removeFirst`, which only moves a slice's start, so its storage
        /// kept every byte of the body. URLSessionTransport stayed flat.
        @Test("a 256 MiB file upload raises the process's peak RSS by far less than the file", arguments: ["file", "stream"])
        func aLargeUploadKeepsMemoryBounded(kind: String) async throws {
            let size = 256 << 20
            let url = try Self.file(size: size)
            defer { try? FileManager.default.removeItem(at: url) }
            let (client, _) = try TestServers.apiClient()
            let body: RequestBody =
                kind == "file"
                ? .file(url, contentType: "application/octet-stream")
                : .stream(.once(try #require(InputStream(url: url)), length: size), contentType: "application/octet-stream")
            let before = try PeakRSS.resetAndRead()
            let reply = try await client.upload(
                Request<Reply>.post("/upload", body: body, policy: .standard.with(\.retry, .none).with(\.deadline, .seconds(120)))
            ).value
            let growth = try PeakRSS.read() - before
            #expect(reply.bytes == size)
            #expect(
                growth < 64 << 20,
                "peak RSS grew by \(growth >> 20) MiB for a \(size >> 20) MiB upload over \(TestTransport.name)")
        }
    }
}
