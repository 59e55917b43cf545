import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// A hostile server's trailer section without end (`GET /hostile/trailers`,
/// TestServer/routes_hostile.py): a chunked body of two bytes, then `mib` MiB of trailer fields,
/// written as fast as the client reads them.
///
/// libcurl 7.88 keeps every trailer line it receives, with no limit of its own. Measured before
/// over CurlTransport: 256 MiB of trailers raised the process's peak RSS from 78 to 512 MiB and the
/// call succeeded; a server that never stops grows the process until it is killed. Over URLSession
/// on Linux FoundationNetworking takes trailers line by line in time that grows with each line
/// (about 140 KB/s on a loopback), holding every URLSession call of the process past their
/// deadlines — not something Courier can stop from above it.
@Suite(
    "An endless trailer section against the reference server",
    .enabled(if: TestTransport.isCurl, "URLSession on Linux holds every call of the process while it takes trailers"))
struct TrailerFloodTests {
    private static func hostile(_ namespace: String) async throws -> [String: Any] {
        try await TestServers.stats(namespace: namespace)["hostile"] as? [String: Any] ?? [:]
    }

    private static let flood = Request<Data>.get("/hostile/trailers", query: ["mib": "64"])

    @Test("a buffered call stops a trailer flood with cannotParseResponse, sent once, reading little of it")
    func bufferedCallStopsATrailerFlood() async throws {
        let (client, namespace) = try TestServers.apiClient()
        let error = await #expect(throws: NetworkError.self) { _ = try await client.send(Self.flood) }
        guard case .transport(let underlying) = error else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
        #expect(underlying.code == .cannotParseResponse)
        #expect(underlying.localizedDescription.contains("trailer section is larger than Courier takes"))
        let stats = try await Self.hostile(namespace)
        #expect(stats["trailers"] as? Int == 1)  // not retried
        // What the client took before it stopped, plus what the sockets' buffers hold (64 MiB sent without the limit).
        let wire = stats["wireBytes"] as? Int ?? .max
        #expect(wire < 16 << 20, "the server wrote \(wire) bytes of trailers")
        let items = try await client.send(Request<Data>.get("/items"))
        #expect(!items.isEmpty)
    }

    @Test("a streamed body ends with cannotParseResponse after its bytes")
    func streamedBodyEndsAtATrailerFlood() async throws {
        let (client, namespace) = try TestServers.apiClient()
        let response = try await client.stream(Self.flood)
        var received = Data()
        let error = await #expect(throws: NetworkError.self) {
            for try await chunk in response.body { received.append(chunk) }
        }
        #expect(received == Data("ok".utf8))
        guard case .transport(let underlying) = error else {
            Issue.record("expected a transport error, got \(String(describing: error))")
            return
        }
        #expect(underlying.code == .cannotParseResponse)
        let wire = try await Self.hostile(namespace)["wireBytes"] as? Int ?? .max
        #expect(wire < 16 << 20, "the server wrote \(wire) bytes of trailers")
    }
}
