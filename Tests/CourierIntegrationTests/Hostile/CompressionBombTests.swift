import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// A hostile server's compression bombs (`GET /hostile/bomb`, TestServer/routes_hostile.py): a
/// valid gzip, deflate or br body of N MiB of zeros, about 1 KiB on the wire per MiB (br: a few
/// hundred bytes in all).
@Suite("Compression bombs against the reference server")
struct CompressionBombTests {
    private static func hostileStats(_ namespace: String) async throws -> [String: Int] {
        let bucket = try await TestServers.stats(namespace: namespace)["hostile"] as? [String: Any] ?? [:]
        return bucket.compactMapValues { $0 as? Int }
    }

    @Test("a buffered call stops a bomb at the client's body limit with responseTooLarge", arguments: ["gzip", "deflate", "br"])
    func bufferedBombStopsAtTheLimit(coding: String) async throws {
        let limit = 8 << 20
        let (client, namespace) = try TestServers.apiClient { $0.maximumResponseBodySize = limit }
        // 1 GiB decoded, 1 MiB of gzip on the wire: without a limit the call returned 1 GiB of zeros.
        let error = await #expect(throws: NetworkError.self) {
            _ = try await client.send(Request<Data>.get("/hostile/bomb", query: ["coding": coding, "mib": "1024"]))
        }
        #expect(error == .responseTooLarge(limit: limit))
        #expect(error?.kind == .responseTooLarge)
        let stats = try await Self.hostileStats(namespace)
        #expect(stats["opened"] == 1)  // not retried
    }

    @Test("the default limit is finite, and a body within it arrives whole")
    func bodyWithinTheLimitArrivesWhole() async throws {
        let (client, _) = try TestServers.apiClient { $0.maximumResponseBodySize = 8 << 20 }
        #expect(APIClient.Configuration(environment: client.environment).maximumResponseBodySize == 64 << 20)
        let data = try await client.send(Request<Data>.get("/hostile/bomb", query: ["coding": "gzip", "mib": "8"]))
        #expect(data.count == 8 << 20)
        #expect(!data.contains { $0 != 0 })
    }

    @Test("a streamed call is not bound by the buffered limit")
    func streamedCallIgnoresTheBufferedLimit() async throws {
        let (client, _) = try TestServers.apiClient { $0.maximumResponseBodySize = 1 << 20 }
        // URLSession on Linux cannot pause: room for the whole decoded body.
        let streamed = try await client.stream(
            Request<Data>.get("/hostile/bomb", query: ["coding": "gzip", "mib": "4"]),
            options: StreamingOptions(bufferLimit: 8 << 20))
        var count = 0
        for try await chunk in streamed.body { count += chunk.count }
        #expect(count == 4 << 20)
    }

    /// Peak RSS checks: one test at a time (`scripts/test`'s quiet pass), so the process's peak is this test's.
    @Suite("on a quiet machine") struct OnAQuietMachine {
        @Test("a 4 GiB gzip bomb raises the process's peak RSS by far less than the bomb")
        func bufferedBombKeepsMemoryBounded() async throws {
            let (client, _) = try TestServers.apiClient()  // the default limit, 64 MiB
            let before = try PeakRSS.resetAndRead()
            await #expect(throws: NetworkError.responseTooLarge(limit: 64 << 20)) {
                _ = try await client.send(Request<Data>.get("/hostile/bomb", query: ["coding": "gzip", "mib": "4096"]))
            }
            let growth = try PeakRSS.read() - before
            // Measured before the limit: +3 GiB for a 3 GiB bomb, on both transports.
            #expect(growth < 512 << 20, "peak RSS grew by \(growth >> 20) MiB")
        }
    }
}

/// The process's peak resident set size (Linux `VmHWM`), resettable through `/proc/self/clear_refs`.
enum PeakRSS {
    struct Unavailable: Error {}

    /// Resets the peak to the current RSS, then reads it, in bytes.
    static func resetAndRead() throws -> Int {
        try? Data("5".utf8).write(to: URL(fileURLWithPath: "/proc/self/clear_refs"))
        return try read()
    }

    /// The peak RSS since the last reset, in bytes.
    static func read() throws -> Int {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap({ Int($0) })
        else { throw Unavailable() }
        return kib << 10
    }
}
