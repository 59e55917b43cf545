#if canImport(CCurl)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierCurl

/// How many connections CurlTransport opens (issue 25, items 1 and 2), counted by the servers:
/// the reference server's `connections` per namespace, the TLS server's client port per request.
@Suite("CurlTransport connection reuse: the pool keeps its connections, HTTP/2 multiplexes from the start")
struct ConnectionReuseTests {
    struct Hello: Decodable, Sendable {
        var httpVersion: String
        var clientPort: Int
    }

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

    @Test("20 requests started together on a new transport share one HTTP/2 connection: one client port, one connect")
    func http2RequestsWaitForTheFirstConnection() async throws {
        let sink = CapturingMetricsSink()
        let authorities = URL(fileURLWithPath: try CurlServers.value("COURIER_TLS_CA_FILE"))
        let client = APIClient(environment: APIEnvironment(name: "tls", baseURL: try CurlServers.url("COURIER_TLS_URL"))) {
            $0.transport = CurlTransport { $0.trustedCertificateAuthorities = authorities }
            $0.interceptors = .standard(metrics: sink)
        }
        let hellos = try await withThrowingTaskGroup(of: Hello.self) { group in
            for index in 0..<20 {
                group.addTask { try await client.send(Request<Hello>.get("/tls/hello", query: ["n": "\(index)"])) }
            }
            return try await group.reduce(into: [Hello]()) { $0.append($1) }
        }
        #expect(hellos.count == 20)
        #expect(hellos.allSatisfy { $0.httpVersion == "2" })
        #expect(Set(hellos.map(\.clientPort)).count == 1, "connections the server saw (client ports)")
        let opened = sink.events.compactMap(\.taskTimings).filter { $0.isReusedConnection == false }.count
        #expect(opened == 1, "connections libcurl opened (CURLINFO_NUM_CONNECTS)")
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
