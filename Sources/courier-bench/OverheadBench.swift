import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// Courier's own CPU per call with no network: building the request, the pipeline, the deadline,
/// validation and decoding, versus decoding alone (what raw code would pay anyway).
func runOverheadBench(calls: Int) async throws {
    let body = Data(
        #"{"id":1,"name":"Widget","price":9.99,"status":"active","tags":["tools"],"createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z"}"#
            .utf8)
    let client = APIClient(environment: APIEnvironment(name: "memory", baseURL: URL(string: "http://127.0.0.1:9")!)) {
        $0.transport = InstantTransport(body: body)
    }
    let decoder = APIClient.makeDecoder()
    let decodeOnly: @Sendable () async throws -> Void = { _ = try decoder.decode(BenchItem.self, from: body) }
    let courier: @Sendable () async throws -> Void = { _ = try await client.send(GetBenchItem()) }
    _ = try await measure(requests: 1000, concurrency: 1, courier)
    let plain = try await measure(requests: calls, concurrency: 1, decodeOnly)
    let full = try await measure(requests: calls, concurrency: 1, courier)
    print(
        String(
            format: "overhead: Courier per call without network %.1f µs CPU (of which JSON decoding %.1f µs), %d calls",
            full.cpuMicrosPerRequest, plain.cpuMicrosPerRequest, calls))
}
