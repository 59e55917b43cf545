import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// A hostile server's oversized response heads (`GET /hostile/head`, TestServer/routes_hostile.py):
/// libcurl, under both transports on Linux, takes a header field line of at most 100 KiB and a
/// header section of at most 300 KiB.
@Suite("Oversized response heads against the reference server")
struct OversizedHeadTests {
    private static func heads(_ namespace: String) async throws -> Int {
        let bucket = try await TestServers.stats(namespace: namespace)["hostile"] as? [String: Any] ?? [:]
        return bucket["heads"] as? Int ?? 0
    }

    /// Measured before: over CurlTransport a section over the limit read as a lost connection
    /// (-1005) and the GET went out 3 times; a long line read as "Out of memory" (-1) on both.
    @Test(
        "a head over libcurl's limits fails once with cannotParseResponse, and the next call goes through",
        arguments: [
            ["kib": "300"],  // one field line of 300 KiB
            ["kib": "4096"],  // one of 4 MiB
            ["kib": "400", "lines": "4000"],  // 4000 lines of 100 B: a 400 KiB section
            ["kib": "1024", "lines": "100"],  // 100 lines of 10 KiB
        ])
    func oversizedHeadFailsOnce(query: [String: String]) async throws {
        let (client, namespace) = try TestServers.apiClient()
        let request = Request<Data>.get("/hostile/head", query: Query(query.map { URLQueryItem(name: $0.key, value: $0.value) }))
        let error = await #expect(throws: NetworkError.self) { _ = try await client.send(request) }
        guard case .transport(let underlying) = error else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
        #expect(underlying.code == .cannotParseResponse)
        #expect(underlying.localizedDescription.contains("header section is larger than libcurl takes"))
        #expect(try await Self.heads(namespace) == 1)  // not retried
        let items = try await client.send(Request<Data>.get("/items"))
        #expect(!items.isEmpty)
    }

    @Test("a head just within libcurl's limits arrives", arguments: [["kib": "90"], ["kib": "250", "lines": "2500"]])
    func headWithinTheLimitsArrives(query: [String: String]) async throws {
        let (client, namespace) = try TestServers.apiClient()
        let request = Request<HTTPResponse>.raw(
            .get, "/hostile/head", query: Query(query.map { URLQueryItem(name: $0.key, value: $0.value) }))
        let response = try await client.send(request)
        #expect(try await response.body.collect(upTo: 16) == Data("ok".utf8))
        #expect(response.headers["X-Filler-0"]?.isEmpty == false)
        #expect(try await Self.heads(namespace) == 1)
    }
}
