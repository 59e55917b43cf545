import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreIntegrationTests {
    /// What the client sends, as the reference server's `/echo` received it (issue 2, item 9).
    @Suite struct URLsAndBodies {
        struct Filter: Encodable, Sendable {
            var email = "user+tag@example.com"
            var q = "a&b=c#d"
            var sp = "x y"
            var ids = [1, 2]
            var missing: String?
        }

        @Test(
            "query values come back exactly as given, for each array style",
            arguments: [
                (URLQueryEncoder.ArrayEncoding.repeated, "ids", ["1", "2"], "ids=1&ids=2"),
                (.brackets, "ids[]", ["1", "2"], "ids%5B%5D=1&ids%5B%5D=2"),
                (.commaSeparated, "ids", ["1,2"], "ids=1%2C2"),
            ])
        func queryRoundTrip(style: URLQueryEncoder.ArrayEncoding, idsName: String, ids: [String], rawIDs: String) async throws {
            let (client, namespace) = try TestServers.apiClient { $0.queryEncoder = URLQueryEncoder(arrayEncoding: style) }
            let echo = try await client.send(Request<Echo>.get("/echo", query: .encodable(Filter())))
            #expect(
                echo.query == [
                    "email": ["user+tag@example.com"], "q": ["a&b=c#d"], "sp": ["x y"], idsName: ids,
                ])
            #expect(echo.rawQuery == "email=user%2Btag%40example.com&\(rawIDs)&q=a%26b%3Dc%23d&sp=x%20y")
            #expect(echo.namespace == namespace)
            #expect(echo.method == "GET")
        }

        @Test("a dictionary-literal query with the same values arrives the same way")
        func literalQuery() async throws {
            let (client, _) = try TestServers.apiClient()
            let echo = try await client.send(
                Request<Echo>.get(
                    "/echo", query: ["email": "user+tag@example.com", "q": "a&b=c#d", "sp": "x y", "none": nil]))
            #expect(echo.query == ["email": ["user+tag@example.com"], "q": ["a&b=c#d"], "sp": ["x y"]])
            #expect(echo.rawQuery == "email=user%2Btag%40example.com&q=a%26b%3Dc%23d&sp=x%20y")
        }

        @Test("the same input gives a byte-identical URL on the wire")
        func stableOnTheWire() async throws {
            let (client, namespace) = try TestServers.apiClient()
            for _ in 0..<3 { _ = try await client.send(Request<Echo>.get("/echo/stable", query: .encodable(Filter()))) }
            let log = try await TestServers.requestLog(namespace: namespace, path: "/echo/stable")
            #expect(log.count == 3)
            #expect(Set(log.map(\.rawQuery)).count == 1)
        }

        @Test("path segments are percent-encoded and decode back; the base path prefix (/ns/…) is kept")
        func pathSegments() async throws {
            let (client, namespace) = try TestServers.apiClient()
            let echo = try await client.send(Request<Echo>.get("/echo/a b/c+d/é/100%/x;y"))
            #expect(echo.routePath == "/echo/a b/c+d/é/100%/x;y")
            #expect(echo.rawPath == "/ns/\(namespace)/echo/a%20b/c%2Bd/%C3%A9/100%25/x%3By")
            #expect(echo.namespace == namespace)
        }

        @Test("an absolute URL endpoint goes where it says, whatever the environment")
        func absoluteURL() async throws {
            let (client, _) = try TestServers.apiClient()
            let other = TestServers.makeNamespace("abs")
            let url = try TestServers.apiURL().appendingPathComponent("ns").appendingPathComponent(other)
                .appendingPathComponent("echo").absoluteString
            let echo = try await client.send(Request<Echo>.get(url + "?x=1", query: ["y": "2 3"]))
            #expect(echo.namespace == other)
            #expect(echo.query == ["x": ["1"], "y": ["2 3"]])
        }

        struct Payload: Encodable, Sendable {
            var name = "Lamp \"deluxe\" + ü"
            var price = 12.5
            var at = Date(timeIntervalSince1970: 1_779_749_187.58)
            var tags = ["a", "b"]
        }

        @Test("a JSON body arrives byte for byte with Content-Type application/json")
        func jsonBody() async throws {
            let (client, _) = try TestServers.apiClient()
            let echo = try await client.send(Request<Echo>.post("/echo", body: Payload()))
            let expected = try client.configuration.encoder.encode(Payload())
            #expect(echo.bodyData == expected)
            #expect(echo.body == #"{"at":"2026-05-25T22:46:27.580Z","name":"Lamp \"deluxe\" + ü","price":12.5,"tags":["a","b"]}"#)
            #expect(echo.header("Content-Type") == "application/json")
            #expect(echo.method == "POST")
        }

        @Test("a form body: + arrives as + (sent as %2B), space and & survive")
        func formBody() async throws {
            let (client, _) = try TestServers.apiClient()
            let echo = try await client.send(
                Request<Echo>(
                    method: .post, path: "/echo",
                    body: .form([
                        URLQueryItem(name: "email", value: "a+b@example.com"),
                        URLQueryItem(name: "note", value: "x y & z=1"),
                    ])))
            #expect(echo.header("Content-Type") == "application/x-www-form-urlencoded")
            #expect(echo.body == "email=a%2Bb%40example.com&note=x%20y%20%26%20z%3D1")
            #expect(echo.form == ["email": ["a+b@example.com"], "note": ["x y & z=1"]])
        }

        @Test("raw Data arrives byte for byte with its content type")
        func rawBody() async throws {
            let (client, _) = try TestServers.apiClient()
            let bytes = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })
            let echo = try await client.send(
                Request<Echo>(method: .put, path: "/echo", body: .data(bytes, contentType: "application/octet-stream")))
            #expect(echo.bodyData == bytes)
            #expect(echo.bodySize == 4096)
            #expect(echo.header("Content-Type") == "application/octet-stream")
            #expect(echo.method == "PUT")
        }

        @Test("headers: client defaults < environment < endpoint; Accept defaults to JSON")
        func headerPrecedence() async throws {
            let namespace = TestServers.makeNamespace()
            var environment = try TestServers.apiEnvironment(namespace: namespace)
            environment.headers = ["X-Api-Key": "env-key", "X-Layer": "environment"]
            let client = APIClient(environment: environment) {
                $0.transport = TestTransport.make()
                $0.headers = ["X-Api-Key": "default-key", "X-Layer": "default", "X-Default-Only": "d"]
            }
            let echo = try await client.send(Request<Echo>(method: .get, path: "/echo", headers: ["x-layer": "endpoint"]))
            #expect(echo.header("X-Api-Key") == "env-key")
            #expect(echo.header("X-Layer") == "endpoint")
            #expect(echo.header("X-Default-Only") == "d")
            #expect(echo.header("Accept") == "application/json")
        }

        @Test("X-Request-ID is sent, equals the context's ID, and is the same on every attempt of a call")
        func requestIDStable() async throws {
            /// Sends the request twice (as a retry would) and returns the second response.
            struct Twice: Interceptor {
                func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
                    _ = try await next(request)
                    return try await next(request)
                }
            }
            let (client, namespace) = try TestServers.apiClient {
                $0.interceptors = [RequestIDInterceptor(), Twice()]
            }
            let response = try await client.response(for: Request<Echo>.get("/echo/rid"))
            let id = response.context.requestID.description
            #expect(response.value.header("X-Request-ID") == id)
            #expect(response.context.attempt == 2)
            let log = try await TestServers.requestLog(namespace: namespace, path: "/echo/rid")
            #expect(log.map { $0.header("X-Request-ID") } == [id, id])
            // A second call gets a different ID.
            let again = try await client.send(Request<Echo>.get("/echo/rid"))
            #expect(again.header("X-Request-ID") != id)
        }

        struct SnakePayload: Encodable, Sendable {
            var itemId = 7
            var displayName = "Seven"
        }

        struct EchoedJSON<T: Decodable & Sendable>: Decodable, Sendable {
            var json: T
        }

        struct CamelItem: Decodable, Equatable, Sendable {
            var itemId: Int
            var displayName: String
        }

        @Test("per-request tuners: encoder override, decoder override, modifyRequest")
        func tuners() async throws {
            let (client, namespace) = try TestServers.apiClient()
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            encoder.outputFormatting = [.sortedKeys]
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            let request = Request<EchoedJSON<CamelItem>>.post("/echo/tuned", body: SnakePayload())
                .encoder(encoder)
                .decoder(decoder)
                .modifyRequest { $0.setValue("tuned", forHTTPHeaderField: "X-Tuned") }
            let echoed = try await client.send(request)
            #expect(echoed.json == CamelItem(itemId: 7, displayName: "Seven"))
            let log = try await TestServers.requestLog(namespace: namespace, path: "/echo/tuned")
            #expect(log.first?.header("X-Tuned") == "tuned")
            // Without the overrides the same call sends camelCase and cannot decode snake_case.
            let plain = try await client.send(Request<Echo>.post("/echo", body: SnakePayload()))
            #expect(plain.body == #"{"displayName":"Seven","itemId":7}"#)
            #expect(plain.header("X-Tuned") == nil)
        }
    }
}
