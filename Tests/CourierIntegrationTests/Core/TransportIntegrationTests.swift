import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreIntegrationTests {
    /// Cancellation, deadlines, sessions and cookies over real sockets (issue 2, item 5).
    @Suite struct Transport {
        @Test("cancelling a call to /slow after 100 ms ends it promptly with .cancelled")
        func cancelSlow() async throws {
            let (client, namespace) = try TestServers.apiClient()
            let clock = ContinuousClock()
            let start = clock.now
            let call = Task { try await client.send(Request<Void>.get("/slow", query: ["seconds": "30"])) }
            try await CoreLive.waitUntilServerSaw("/slow", namespace: namespace)
            try await Task.sleep(until: start.advanced(by: .milliseconds(100)), clock: clock)
            let cancelledAt = clock.now
            call.cancel()
            let result = await call.result
            let ended = clock.now - cancelledAt
            guard case .failure(let error as NetworkError) = result else {
                Issue.record("expected a NetworkError, got \(result)")
                return
            }
            #expect(error.isCancellation)
            #expect(ended < .seconds(10), "ended \(ended) after cancel")  // the server answers after 30 s
        }

        @Test("cancellation reaches the transport's task: the transport throws URLError.cancelled promptly")
        func cancellationPropagatesToTheTransport() async throws {
            let namespace = TestServers.makeNamespace()
            let base = try TestServers.apiURL().appendingPathComponent("ns").appendingPathComponent(namespace)
            let request = URLRequest(url: try #require(URL(string: base.absoluteString + "/slow?seconds=30")))
            let transport = TestTransport.make()
            let clock = ContinuousClock()
            let task = Task { try await transport.send(request) }
            try await CoreLive.waitUntilServerSaw("/slow", namespace: namespace)
            let cancelledAt = clock.now
            task.cancel()
            let result = await task.result
            #expect(clock.now - cancelledAt < .seconds(10))  // the server answers after 30 s
            guard case .failure(let error as URLError) = result else {
                Issue.record("expected URLError.cancelled from \(TestTransport.name), got \(result)")
                return
            }
            #expect(error.code == .cancelled)
        }

        @Test("a 0.3 s policy deadline on /slow?seconds=10 gives .timedOut(nil) long before the server answers")
        func deadline() async throws {
            let (client, _) = try TestServers.apiClient()
            _ = try await client.send(Request<Echo>.get("/echo/warm-up"))
            let clock = ContinuousClock()
            let start = clock.now
            let error = await CoreLive.networkError {
                try await client.send(
                    Request<Void>.get("/slow", query: ["seconds": "30"])
                        .policy(.standard.with(\.deadline, .milliseconds(300))))
            }
            let elapsed = clock.now - start
            guard case .timedOut(let underlying)? = error else {
                Issue.record("expected timedOut, got \(String(describing: error))")
                return
            }
            #expect(underlying == nil, "the deadline is Courier's own, not URLSession's idle timeout")
            #expect(elapsed >= .milliseconds(290))
            // Exact deadline arithmetic is unit-tested on a manual clock; here the bound only has to
            // prove the call was cut by Courier (the server answers after 30 s), with room for a
            // loaded 2-core CI machine running the whole suite in parallel.
            #expect(elapsed < .seconds(10), "took \(elapsed)")
        }

        /// Wall-clock checks, run by `scripts/test` in a pass of their own, one at a time.
        @Suite("on a quiet machine") struct OnAQuietMachine {
            // Timing-sensitive: 0.8 s of slack (wider slack would no longer catch a deadline
            // truncated to 3 s). Inside the parallel suite on 2 cores the 3.1 s answer itself
            // arrived after 3.9 s (the shared reference server and the client were both loaded).
            @Test(
                "a fractional deadline is not cut short by URLSession: 3.9 s covers a 3.1 s answer", .tags(.timingSensitive))
            func fractionalDeadline() async throws {
                // URLSession on Linux truncates timeoutInterval to whole seconds; a 3.9 s idle timeout
                // used to fire at 3 s with URLError.timedOut before the server answered.
                let (client, _) = try TestServers.apiClient()
                let slept: [String: Double] = try await client.send(
                    Request<[String: Double]>.get("/slow", query: ["seconds": "3.1"])
                        .policy(.standard.with(\.deadline, .milliseconds(3900)).with(\.retry, .none)))
                #expect(slept["slept"] == 3.1)
            }
        }

        @Test("a deadline too large for URLSession's timeout arithmetic (\".seconds(Int64.max)\") does not crash")
        func hugeDeadline() async throws {
            let (client, _) = try TestServers.apiClient()
            let echo = try await client.send(
                Request<Echo>.get("/echo/huge")
                    .policy(.standard.with(\.deadline, .seconds(Int64.max))))
            #expect(echo.routePath == "/echo/huge")
        }

        @Test("one URLSession per client, reused by every call", TestTransport.urlSessionOnly)
        func oneSession() async throws {
            let (client, namespace) = try TestServers.apiClient()
            let session = try #require((client.configuration.transport as? URLSessionTransport)?.session)
            for _ in 0..<3 { _ = try await client.send(Request<Echo>.get("/echo/session")) }
            #expect((client.configuration.transport as? URLSessionTransport)?.session === session)
            #expect(session.configuration.urlCache == nil)
            let log = try await TestServers.requestLog(namespace: namespace, path: "/echo/session")
            #expect(log.count == 3)
        }

        struct CookieEcho: Decodable, Sendable {
            var cookie: String?
            var cookies: [String: String]
        }

        @Test("cookies stay in the client that received them: not in another client, not in the shared jar")
        func cookieIsolation() async throws {
            let name = "courier_\(UUID().uuidString.prefix(8).lowercased())"
            let namespace = TestServers.makeNamespace()
            let (clientA, _) = try TestServers.apiClient(namespace: namespace)
            let (clientB, _) = try TestServers.apiClient(namespace: namespace)
            _ = try await clientA.send(Request<HTTPResponse>.raw(.get, "/cookies/set", query: [name: "secret"]))

            let seenByA = try await clientA.send(Request<CookieEcho>.get("/cookies"))
            #expect(seenByA.cookies[name] == "secret", "the client keeps its own cookies")
            let seenByB = try await clientB.send(Request<CookieEcho>.get("/cookies"))
            #expect(seenByB.cookies[name] == nil)
            #expect(seenByB.cookie == nil)

            let shared = HTTPCookieStorage.shared.cookies ?? []
            #expect(!shared.contains { $0.name == name })
            guard !TestTransport.isCurl else { return }  // CurlTransport's store is libcurl's: checked server-side above
            let storageA = (clientA.configuration.transport as? URLSessionTransport)?.cookieStorage
            #expect(storageA?.cookies?.contains { $0.name == name } == true)
            let storageB = (clientB.configuration.transport as? URLSessionTransport)?.cookieStorage
            #expect(storageB?.cookies?.contains { $0.name == name } != true)
        }
    }
}
