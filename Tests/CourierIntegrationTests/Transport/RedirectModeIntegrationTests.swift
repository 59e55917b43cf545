import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// Per-request redirect modes against the reference servers, on the transport `COURIER_TRANSPORT`
/// selects: Courier follows redirects itself on every transport, so both behave the same. The
/// second reference server (`COURIER_API2_URL`, another port) is another origin; its request log
/// proves what reached it.
@Suite("Redirect modes (integration)")
struct RedirectModeIntegrationTests {
    /// `/status/302` on the first server, pointing at `/echo/landed` of the same namespace on `root`.
    static func redirect(to root: URL, namespace: String) -> Request<Echo> {
        let target = TwoServers.base(root, namespace).appendingPathComponent("echo").appendingPathComponent("landed")
        return Request<Echo>.get("/status/302", query: ["location": target.absoluteString])
    }

    @Test("doNotFollow: the 302 is the response with its Location, and its target is never requested")
    func doNotFollow() async throws {
        let servers = try TwoServers()
        let (client, _) = try TestServers.apiClient(namespace: servers.namespace)
        let target = TwoServers.base(servers.first, servers.namespace).appendingPathComponent("echo/landed")
        let response = try await client.response(
            for: Request<Void>.get("/status/302", query: ["location": target.absoluteString]).redirects(.doNotFollow))
        #expect(response.statusCode == 302)
        #expect(response.response.headers["Location"] == target.absoluteString)
        #expect(try await servers.log(servers.first).filter { $0.path.hasSuffix("/echo/landed") }.isEmpty)
    }

    @Test("follow (default): a cross-origin hop reaches the other origin without X-API-Key or Authorization")
    func followDropsCustomCredentialAcrossOrigins() async throws {
        let servers = try TwoServers()
        let (client, _) = try TestServers.apiClient(namespace: servers.namespace)
        let echo = try await client.send(
            Self.redirect(to: servers.second, namespace: servers.namespace)
                .header("X-API-Key", "SECRET-API-KEY-1").header("Authorization", "Bearer SECRET-1").header("X-Trace", "kept"))
        #expect(echo.routePath == "/echo/landed")
        let landed = try #require(try await servers.log(servers.second).last { $0.path.hasSuffix("/echo/landed") })
        #expect(landed.header("X-API-Key") == nil, "the other origin saw \(landed.headers)")
        #expect(landed.header("Authorization") == nil, "the other origin saw \(landed.headers)")
        #expect(landed.header("X-Trace") == "kept")
        // The first origin did get the key: the redirect itself was authorized.
        let first = try #require(try await servers.log(servers.first).last { $0.path.hasSuffix("/status/302") })
        #expect(first.header("X-API-Key") == "SECRET-API-KEY-1")
    }

    @Test("follow: X-API-Key reaches another origin only when the app forwards it by name")
    func forwardedByName() async throws {
        let servers = try TwoServers()
        let (client, _) = try TestServers.apiClient(namespace: servers.namespace) {
            $0.redirects.forwardedCredentialHeaders = ["X-API-Key"]
        }
        _ = try await client.send(
            Self.redirect(to: servers.second, namespace: servers.namespace)
                .header("X-API-Key", "SECRET-API-KEY-2").header("Authorization", "Bearer SECRET-2"))
        let landed = try #require(try await servers.log(servers.second).last { $0.path.hasSuffix("/echo/landed") })
        #expect(landed.header("X-API-Key") == "SECRET-API-KEY-2")
        #expect(landed.header("Authorization") == nil)
    }

    @Test("follow: a same-origin hop keeps X-API-Key")
    func sameOriginKeepsKey() async throws {
        let servers = try TwoServers()
        let (client, _) = try TestServers.apiClient(namespace: servers.namespace)
        let echo = try await client.send(
            Self.redirect(to: servers.first, namespace: servers.namespace).header("X-API-Key", "SECRET-API-KEY-3"))
        #expect(echo.header("X-API-Key") == "SECRET-API-KEY-3")
    }

    @Test("decide: the closure sees the cross-origin hop; fail ends the call typed and the other origin sees nothing")
    func decideFails() async throws {
        let servers = try TwoServers()
        let (client, _) = try TestServers.apiClient(namespace: servers.namespace)
        let seen = Locked<[RedirectHop]>([])
        let mode = RedirectMode.decide { hop in
            seen.withLock { $0.append(hop) }
            return hop.isCrossOrigin ? .fail(reason: "other origin") : .follow
        }
        let error = await #expect(throws: NetworkError.self) {
            try await client.send(Self.redirect(to: servers.second, namespace: servers.namespace).redirects(mode))
        }
        #expect(error?.kind == .redirectRefused)
        let hop = try #require(seen.withLock { $0.first })
        #expect(hop.statusCode == 302 && hop.number == 1 && hop.isCrossOrigin)
        #expect(hop.to.port == servers.second.port)
        #expect(try await servers.log(servers.second).isEmpty)
    }

    @Test("decide: follow sends the hop under the same credential rules; stop returns the redirect")
    func decideFollowsAndStops() async throws {
        let servers = try TwoServers()
        let (client, _) = try TestServers.apiClient(namespace: servers.namespace)
        let echo = try await client.send(
            Self.redirect(to: servers.second, namespace: servers.namespace).header("X-API-Key", "SECRET-API-KEY-4")
                .redirects(.decide { _ in .follow }))
        #expect(echo.routePath == "/echo/landed")
        let landed = try #require(try await servers.log(servers.second).last { $0.path.hasSuffix("/echo/landed") })
        #expect(landed.header("X-API-Key") == nil, "the other origin saw \(landed.headers)")

        let before = try await servers.log(servers.second).count
        let stopped = try await client.send(
            Request<HTTPResponse>.raw(
                .get, "/status/307",
                query: [
                    "location": TwoServers.base(servers.second, servers.namespace).appendingPathComponent("echo/x").absoluteString
                ]
            ).redirects(.decide { _ in .stop }))
        #expect(stopped.statusCode == 307)
        #expect(try await servers.log(servers.second).count == before)
    }

    @Test("httpbin: a chain of redirects, stopped by the closure at its second hop")
    func httpbinChain() async throws {
        let client = APIClient(environment: try TestServers.httpbinEnvironment()) { TestTransport.configure(&$0) }
        let numbers = Locked<[Int]>([])
        let response = try await client.response(
            for: Request<Void>.get("/redirect/4").redirects(
                .decide { hop in
                    numbers.withLock { $0.append(hop.number) }
                    return hop.number < 2 ? .follow : .stop
                }))
        #expect(response.statusCode == 302)
        #expect(numbers.withLock { $0 } == [1, 2])
        #expect(response.context.redirects.count == 1)
    }
}
