import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreIntegrationTests {
    /// Generic HTTP behaviour against httpbin, a server Courier did not write.
    @Suite struct HTTPBin {
        private func client(configure: (inout APIClient.Configuration) -> Void = { _ in }) throws -> APIClient {
            APIClient(environment: try TestServers.httpbinEnvironment()) { configuration in
                TestTransport.configure(&configuration)
                configure(&configuration)
            }
        }

        struct Get: Decodable, Sendable {
            var args: [String: String]
            var headers: [String: String]
        }

        @Test("/get receives the query values exactly")
        func get() async throws {
            let result = try await client().send(
                Request<Get>.get(
                    "/get", query: ["email": "user+tag@example.com", "q": "a&b=c#d", "sp": "x y"]))
            #expect(result.args == ["email": "user+tag@example.com", "q": "a&b=c#d", "sp": "x y"])
            #expect(result.headers["Accept"] == "application/json")
        }

        struct Post: Decodable, Sendable {
            struct Body: Decodable, Equatable, Sendable {
                var name: String
                var ids: [Int]
            }
            var json: Body?
            var data: String
            var headers: [String: String]
        }

        struct Payload: Encodable, Sendable {
            var name = "Lamp"
            var ids = [1, 2]
        }

        @Test("/post receives the JSON body and its content type")
        func post() async throws {
            let result = try await client().send(Request<Post>.post("/post", body: Payload()))
            #expect(result.json == Post.Body(name: "Lamp", ids: [1, 2]))
            #expect(result.data == #"{"ids":[1,2],"name":"Lamp"}"#)
            #expect(result.headers["Content-Type"] == "application/json")
        }

        @Test("/status/418 is a client error")
        func teapot() async throws {
            let error = await CoreLive.networkError { try await client().send(Request<Void>.get("/status/418")) }
            guard case .client(let response)? = error else {
                Issue.record("expected client, got \(String(describing: error))")
                return
            }
            #expect(response.statusCode == 418)
        }

        struct Headers: Decodable, Sendable { var headers: [String: String] }

        @Test("/headers sees default, environment and endpoint headers and X-Request-ID")
        func headers() async throws {
            var environment = try TestServers.httpbinEnvironment()
            environment.headers = ["X-Env": "bin"]
            let client = APIClient(environment: environment) {
                $0.transport = TestTransport.make()
                $0.headers = ["X-Default": "d"]
            }
            // httpbin hides X-Request-Id (a proxy header) unless asked with show_env=1.
            let response = try await client.response(
                for: Request<Headers>(
                    method: .get, path: "/headers", query: ["show_env": "1"], headers: ["X-Endpoint": "e"]))
            let headers = response.value.headers
            #expect(headers["X-Env"] == "bin")
            #expect(headers["X-Default"] == "d")
            #expect(headers["X-Endpoint"] == "e")
            #expect(headers["X-Request-Id"]?.lowercased() == response.context.requestID.description)
        }

        struct Gzipped: Decodable, Sendable {
            var gzipped: Bool
            var method: String
        }

        @Test("/gzip is decoded transparently")
        func gzip() async throws {
            let response = try await client().response(for: Request<Gzipped>.get("/gzip"))
            #expect(response.value.gzipped)
            #expect(response.value.method == "GET")
            #expect(response.response.headers["Content-Encoding"] == "gzip")
        }

        /// "Promptly" is a wall-clock bound: in the parallel passes at a load of 12-14 on 2 cores
        /// the cancel took 6.1-6.4 s (curl) against its 6 s, and the 200 ms wait before it woke
        /// up to 7 s late. That a cancel reaches the transport before the server answers is
        /// proven in the parallel passes against the reference server, from the moment it saw
        /// the request (`CoreIntegrationTests.Transport`).
        @Suite("on a quiet machine") struct OnAQuietMachine {
            @Test("/delay/10 cancelled after it started ends promptly with .cancelled")
            func delayCancelled() async throws {
                let client = APIClient(environment: try TestServers.httpbinEnvironment()) { TestTransport.configure(&$0) }
                let clock = ContinuousClock()
                let start = clock.now
                let call = Task { try await client.send(Request<Void>.get("/delay/10")) }
                try await Task.sleep(until: start.advanced(by: .milliseconds(200)), clock: clock)
                let cancelledAt = clock.now
                call.cancel()
                let result = await call.result
                // Well before httpbin's answer at 10 s (its longest delay): a cancel that did not reach
                // the task would wait it out.
                #expect(clock.now - cancelledAt < .seconds(6))
                guard case .failure(let error as NetworkError) = result else {
                    Issue.record("expected a NetworkError, got \(result)")
                    return
                }
                #expect(error.isCancellation)
            }
        }
    }
}
