import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// How many connections `URLSessionTransport` opens when the load drops and comes back, counted by
/// the reference server (`connections` per namespace in `_stats`).
@Suite("URLSessionTransport connection reuse: a pause between requests keeps the open connections")
struct URLSessionConnectionReuseTests {
    @Test("as many requests as the host limit at once, then one at a time, then the limit again: no connection is opened twice")
    func connectionsSurviveAQuietSpell() async throws {
        let namespace = TestServers.makeNamespace("reuse")
        let configuration = URLSessionTransport.defaultConfiguration()
        let limit = configuration.httpMaximumConnectionsPerHost
        let transport = URLSessionTransport(configuration: configuration)
        let item = try TestServers.apiEnvironment(namespace: namespace).baseURL.appendingPathComponent("items")
            .appendingPathComponent("1")
        // `limit` requests the server holds for half a second each: that many connections busy at once.
        func allAtOnce() async throws {
            let delay: [String: Any] = ["action": "delay", "seconds": 0.5]
            let plan: [String: Any] = [
                "path": "/items/1", "method": "GET", "faults": Array(repeating: delay, count: limit),
            ]
            let (status, _) = try await TestServers.control("POST", "_faults", namespace: namespace, json: plan)
            try #require(status == 200)
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<limit { group.addTask { try await transport.send(URLRequest(url: item)).statusCode } }
                for try await status in group { #expect(status == 200) }
            }
        }
        try await allAtOnce()
        let first = try await Self.connections(namespace)
        try #require(first == limit, "the first \(limit) requests ran at once")
        // One request in flight: where the HTTP layer keeps fewer idle connections per transfer in
        // flight than the host limit (libcurl under FoundationNetworking: 4), some would close here.
        for _ in 0..<10 { #expect(try await transport.send(URLRequest(url: item)).statusCode == 200) }
        try await allAtOnce()
        #expect(try await Self.connections(namespace) == limit, "connections the server accepted for \(2 * limit + 10) requests")
    }

    @Test("the default configuration's host limit is at most the platform's idle-connection floor")
    func defaultHostLimitFitsTheIdleConnectionFloor() {
        let limit = URLSessionTransport.defaultConfiguration().httpMaximumConnectionsPerHost
        if let floor = TransportCapabilities.current.idleConnectionFloor {
            #expect(limit <= floor)
        }
        #expect(limit >= 1)
    }

    /// The TCP connections that carried the namespace's requests (reference server, `_stats`).
    private static func connections(_ namespace: String) async throws -> Int? {
        (try await TestServers.stats(namespace: namespace)["connections"] as? NSNumber)?.intValue
    }
}
