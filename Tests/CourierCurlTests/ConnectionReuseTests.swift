#if canImport(CCurl)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierCurl

/// How many connections CurlTransport opens (issue 25, item 1), counted by the reference
/// server's `connections` per namespace.
@Suite("CurlTransport connection reuse: the pool keeps its connections")
struct ConnectionReuseTests {
    @Test("6 requests at once, then one at a time, then 6 at once again: the second 6 reuse the first 6 connections")
    func poolKeepsConnectionsWhenFewerRequestsRun() async throws {
        let (base, namespace) = try CurlServers.namespace()
        let transport = CurlTransport()  // 6 connections per host
        let item = base.appendingPathComponent("items").appendingPathComponent("1")
        // Six requests the server holds for a second each: six connections busy at once.
        func sixAtOnce() async throws {
            try await Self.delayNext(6, of: "/items/1", in: namespace)
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<6 { group.addTask { try await transport.send(URLRequest(url: item)).statusCode } }
                for try await status in group { #expect(status == 200) }
            }
        }
        try await sixAtOnce()
        let first = try await Self.connections(namespace)
        try #require(first == 6, "the first six requests ran at once")
        // One request in flight: libcurl's default pool size (4 per easy handle added) closed two
        // of the six kept-alive connections here.
        for _ in 0..<10 { #expect(try await transport.send(URLRequest(url: item)).statusCode == 200) }
        try await sixAtOnce()
        let total = try await Self.connections(namespace)
        #expect(total == 6, "connections the server accepted for 22 requests")
    }

    /// Makes the server hold the namespace's next `count` `GET path` requests for a second each.
    private static func delayNext(_ count: Int, of path: String, in namespace: String) async throws {
        let delay: [String: Any] = ["action": "delay", "seconds": 1]
        let plan: [String: Any] = ["path": path, "method": "GET", "faults": Array(repeating: delay, count: count)]
        var request = URLRequest(
            url: try CurlServers.url("COURIER_API_URL").appendingPathComponent("ns").appendingPathComponent(namespace)
                .appendingPathComponent("_faults"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = try JSONSerialization.data(withJSONObject: plan)
        let (_, response) = try await URLSession.shared.data(for: request)
        try #require((response as? HTTPURLResponse)?.statusCode == 200)
    }

    /// The TCP connections that carried the namespace's requests (reference server, `_stats`).
    private static func connections(_ namespace: String) async throws -> Int? {
        (try await CurlServers.stats(namespace)["connections"] as? NSNumber)?.intValue
    }
}
#endif
