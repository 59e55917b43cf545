import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// Request bodies (JSON, form, raw data) and header precedence (issue 2, items 6 and 9).
    @Suite struct RequestBodiesAndHeaders {
        private func sent(
            _ request: Request<Void>, environment: APIEnvironment = CoreFixture.environment,
            configure: (inout APIClient.Configuration) -> Void = { _ in }
        ) async throws -> URLRequest {
            let stub = StubTransport(responses: [.status(204)])
            try await CoreFixture.client(stub, environment: environment, configure: configure).send(request)
            return try #require(stub.requests.first)
        }

        struct NewItem: Encodable, Sendable {
            var name: String
            var createdAt: Date
            var tags: [String]
        }

        @Test("a JSON body: sorted keys, ISO 8601 dates with milliseconds, application/json")
        func jsonBody() async throws {
            let date = Date(timeIntervalSince1970: 1_779_749_187.580)
            let request = try await sent(.post("/items", body: NewItem(name: "Lamp+1", createdAt: date, tags: ["a"])))
            #expect(request.httpMethod == "POST")
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
            let body = String(decoding: request.httpBody ?? Data(), as: UTF8.self)
            #expect(body == #"{"createdAt":"2026-05-25T22:46:27.580Z","name":"Lamp+1","tags":["a"]}"#)
        }

        @Test("form fields: + is sent as %2B, space as %20, order kept")
        func formBody() async throws {
            let request = try await sent(
                Request<Void>(
                    method: .post, path: "/login",
                    body: .form([
                        URLQueryItem(name: "user", value: "a+b@example.com"),
                        URLQueryItem(name: "pass", value: "x y&z=1"),
                    ])))
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
            #expect(
                String(decoding: request.httpBody ?? Data(), as: UTF8.self)
                    == "user=a%2Bb%40example.com&pass=x%20y%26z%3D1")
        }

        struct Credentials: Encodable, Sendable {
            var user = "a+b@example.com"
            var grant = "password"
        }

        @Test("an Encodable form body uses sorted keys")
        func formEncodableBody() async throws {
            let request = try await sent(Request<Void>(method: .post, path: "/token", body: .formEncodable(Credentials())))
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
            #expect(String(decoding: request.httpBody ?? Data(), as: UTF8.self) == "grant=password&user=a%2Bb%40example.com")
        }

        @Test("raw data is sent byte for byte with its content type")
        func rawData() async throws {
            let bytes = Data([0x00, 0xFF, 0x10, 0x80, 0x7F])
            let request = try await sent(Request<Void>(method: .put, path: "/blob", body: .data(bytes, contentType: "image/png")))
            #expect(request.httpBody == bytes)
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "image/png")
        }

        @Test("an endpoint's own Content-Type wins over the body's")
        func explicitContentType() async throws {
            let request = try await sent(
                Request<Void>(
                    method: .post, path: "/x", headers: ["content-type": "application/vnd.api+json"],
                    body: .json(["a": 1])))
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/vnd.api+json")
            #expect(String(decoding: request.httpBody ?? Data(), as: UTF8.self) == #"{"a":1}"#)
        }

        @Test("no body: no Content-Type, no httpBody")
        func noBody() async throws {
            let request = try await sent(.get("/x"))
            #expect(request.httpBody == nil)
            #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
        }

        @Test("a body that cannot be encoded is an invalidRequest, and nothing is sent")
        func unencodableBody() async throws {
            let stub = StubTransport(responses: [.status(204)])
            let error = await CoreFixture.networkError {
                try await CoreFixture.client(stub).send(Request<Void>.post("/x", body: ["nan": Double.nan]))
            }
            guard case .invalidRequest(let reason)? = error else {
                Issue.record("expected invalidRequest, got \(String(describing: error))")
                return
            }
            #expect(reason.contains("body"))
            #expect(stub.requestCount == 0)
        }

        @Test("header precedence: client defaults < environment < endpoint, case-insensitively")
        func headerPrecedence() async throws {
            let environment = APIEnvironment(
                name: "staging", baseURL: CoreFixture.baseURL,
                headers: ["x-api-key": "staging-key", "X-Env": "staging", "X-Layer": "environment"])
            let request = try await sent(
                Request<Void>(method: .get, path: "/x", headers: ["X-LAYER": "endpoint", "X-Only-Endpoint": "1"]),
                environment: environment
            ) {
                $0.headers = ["X-Api-Key": "default-key", "X-Layer": "default", "X-Only-Default": "1"]
            }
            #expect(request.value(forHTTPHeaderField: "X-Api-Key") == "staging-key")
            #expect(request.value(forHTTPHeaderField: "X-Layer") == "endpoint")
            #expect(request.value(forHTTPHeaderField: "X-Env") == "staging")
            #expect(request.value(forHTTPHeaderField: "X-Only-Default") == "1")
            #expect(request.value(forHTTPHeaderField: "X-Only-Endpoint") == "1")
            // One field per name: nothing was joined with the overridden values.
            let fields = request.allHTTPHeaderFields ?? [:]
            #expect(fields.keys.filter { $0.lowercased() == "x-layer" }.count == 1)
        }

        @Test("repeated header fields declared by an endpoint are all sent")
        func repeatedEndpointHeaders() async throws {
            var headers = HTTPHeaders()
            headers.add("Accept-Language", "de")
            headers.add("Accept-Language", "en;q=0.5")
            let request = try await sent(Request<Void>(method: .get, path: "/x", headers: headers)) {
                $0.headers = ["Accept-Language": "fr"]
            }
            #expect(request.value(forHTTPHeaderField: "Accept-Language") == "de, en;q=0.5")
        }

        @Test("Accept defaults to application/json unless set")
        func acceptDefault() async throws {
            #expect(try await sent(.get("/x")).value(forHTTPHeaderField: "Accept") == "application/json")
            let custom = try await sent(Request<Void>(method: .get, path: "/x", headers: ["accept": "text/csv"]))
            #expect(custom.value(forHTTPHeaderField: "Accept") == "text/csv")
        }

        @Test("X-Request-ID is the context's ID, lower-case, and differs per call")
        func requestID() async throws {
            let stub = StubTransport { _ in .status(204) }
            let client = CoreFixture.client(stub)
            let first = try await client.response(for: Request<Void>.get("/a"))
            let second = try await client.response(for: Request<Void>.get("/a"))
            let sentIDs = stub.requests.map { $0.value(forHTTPHeaderField: "X-Request-ID") }
            #expect(sentIDs == [first.context.requestID.description, second.context.requestID.description])
            #expect(first.context.requestID != second.context.requestID)
        }

        @Test(
            "a header value with CR, LF or NUL, or a name that is not a token, is an invalidRequest and nothing is sent",
            arguments: [
                ("X-Evil", "a\r\nX-Injected: 1"), ("X-Evil", "a\nb"), ("X-Evil", "a\u{0}b"),
                ("Bad Name", "v"), ("X-Colon:", "v"), ("", "v"), ("X-Evil\r\nX-Injected", "1"), ("Nämé", "v"),
            ])
        func invalidHeaderFields(name: String, value: String) async throws {
            let stub = StubTransport(responses: [.status(204)])
            let error = await CoreFixture.networkError {
                try await CoreFixture.client(stub).send(Request<Void>.get("/h").header(name, value))
            }
            guard case .invalidRequest(let reason)? = error else {
                Issue.record("expected invalidRequest, got \(String(describing: error))")
                return
            }
            #expect(!reason.contains("Injected: 1"), "the message must not repeat the value")
            #expect(stub.requestCount == 0)
        }

        @Test("odd-cased names, tokens with punctuation, non-ASCII values and empty values are sent")
        func validHeaderFields() async throws {
            let request = try await sent(
                Request<Void>.get("/h")
                    .header("x-CUSTOM", "1").header("X-a.b_c~!#$%&'*+^`|", "tab\tinside").header("X-U", "héllo").header(
                        "X-Empty", ""))
            #expect(request.value(forHTTPHeaderField: "X-Custom") == "1")
            #expect(request.value(forHTTPHeaderField: "X-U") == "héllo")
            #expect(request.value(forHTTPHeaderField: "X-a.b_c~!#$%&'*+^`|") == "tab\tinside")
        }

        @Test("the method is sent as given, including extension methods")
        func methods() async throws {
            for method: HTTPMethod in [.get, .post, .put, .patch, .delete, .options, "query"] {
                let request = try await sent(Request<Void>(method: method, path: "/m"))
                #expect(request.httpMethod == method.rawValue)
            }
            #expect(HTTPMethod(rawValue: "query").rawValue == "QUERY")
        }

        // Whole seconds rounded up, plus one: URLSession on Linux truncates timeoutInterval to whole
        // seconds (a 2.5 s interval fires at 2 s, before the deadline) and traps on huge values;
        // an idle timeout equal to the deadline raced it (URLError.timedOut on one transport,
        // Courier's timedOut(nil) on the other).
        @Test(
            "the URLRequest idle timeout is whole seconds, at least a second longer than the deadline, in 2 s...1 year",
            arguments: [
                (Duration.milliseconds(300), 2.0), (.seconds(30), 31.0), (.milliseconds(2500), 4.0),
                (.milliseconds(1200), 3.0), (.zero, 2.0), (.seconds(-5), 2.0),
                (.seconds(Int64.max), 31_536_000.0), (.seconds(1e16), 31_536_000.0),
            ])
        func idleTimeout(deadline: Duration, expected: TimeInterval) async throws {
            let request = try await sent(Request<Void>.get("/t").policy(.standard.with(\.deadline, deadline)))
            #expect(request.timeoutInterval == expected)
        }
    }
}
