import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// The client: environments, validators, conveniences (issue 2, items 1 and 6).
    @Suite struct ClientBehaviour {
        typealias Item = CoreFixture.Item

        @Test("switching the environment at runtime redirects later calls and their headers")
        func environmentSwitch() async throws {
            let stub = StubTransport { _ in .status(204) }
            let development = APIEnvironment(name: "development", baseURL: URL(string: "http://127.0.0.1:8080/api")!)
            let staging = APIEnvironment(
                name: "staging", baseURL: URL(string: "https://staging.example.test/v2")!,
                headers: ["X-Api-Key": "stage"])
            let client = CoreFixture.client(stub, environment: development)
            try await client.send(Request<Void>.get("/items"))
            try await client.switchEnvironment(to: staging)
            #expect(client.environment == staging)
            try await client.send(Request<Void>.get("/items"))
            try await client.switchEnvironment(to: development)
            try await client.send(Request<Void>.get("/items"))
            #expect(
                stub.requests.map(CoreFixture.urlString) == [
                    "http://127.0.0.1:8080/api/items", "https://staging.example.test/v2/items", "http://127.0.0.1:8080/api/items",
                ])
            #expect(stub.requests.map { $0.value(forHTTPHeaderField: "X-Api-Key") } == [nil, "stage", nil])
            #expect(client.configuration.environment == development)
        }

        @Test("a call already running keeps the environment it started with")
        func switchDuringCall() async throws {
            let gate = AsyncStream<Void>.makeStream()
            let stub = StubTransport { _ in
                for await _ in gate.stream { break }
                return .status(204)
            }
            let first = APIEnvironment(name: "a", baseURL: URL(string: "https://a.example.test")!)
            let second = APIEnvironment(name: "b", baseURL: URL(string: "https://b.example.test")!)
            let client = CoreFixture.client(stub, environment: first)
            let call = Task { try await client.send(Request<Void>.get("/x")) }
            try await CoreFixture.waitUntil("the first call to reach the transport") { stub.requestCount == 1 }
            try await client.switchEnvironment(to: second)
            gate.continuation.yield()
            try await call.value
            #expect(stub.requests.first?.url?.host == "a.example.test")
        }

        @Test("ErrorEnvelopeValidator turns a 200 error envelope into .rejected with the server's code")
        func envelopeRejected() async throws {
            let body = #"{"ok":false,"error":{"code":"insufficient_funds","message":"Not enough money"}}"#
            let stub = StubTransport(responses: [.json(body)])
            let client = CoreFixture.client(stub) { $0.validators = [ErrorEnvelopeValidator()] }
            let error = await CoreFixture.networkError { try await client.send(Request<EmptyResponse>.get("/envelope-error")) }
            guard case .rejected(let problem)? = error else {
                Issue.record("expected rejected, got \(String(describing: error))")
                return
            }
            #expect(problem.code == "insufficient_funds")
            #expect(problem.message == "Not enough money")
            #expect(problem.response.statusCode == 200)
            #expect(error?.userMessage == "Not enough money")
        }

        struct Envelope<T: Decodable & Sendable>: Decodable, Sendable {
            var ok: Bool
            var data: T
        }

        struct Account: Decodable, Equatable, Sendable {
            var id: Int
            var name: String
            var balance: Double
        }

        @Test(
            "ErrorEnvelopeValidator lets a success envelope through",
            arguments: [
                #"{"ok":true,"data":{"id":42,"name":"Envelope","balance":100.25}}"#,
                #"{"ok":true,"error":null,"data":{"id":42,"name":"Envelope","balance":100.25}}"#,
            ])
        func envelopeOK(body: String) async throws {
            let stub = StubTransport(responses: [.json(body)])
            let client = CoreFixture.client(stub) { $0.validators = [ErrorEnvelopeValidator()] }
            let envelope = try await client.send(Request<Envelope<Account>>.get("/envelope-ok"))
            #expect(envelope.data == Account(id: 42, name: "Envelope", balance: 100.25))
        }

        @Test(
            "ErrorEnvelopeValidator shapes",
            arguments: [
                (#"{"ok":false}"#, true, nil),
                (#"{"error":"rate_limited"}"#, true, "rate_limited"),
                (#"{"success":false,"error":{"code":"x"}}"#, true, "x"),
                (#"[{"error":"not an envelope"}]"#, false, nil),
                ("plain text", false, nil),
                ("", false, nil),
            ] as [(String, Bool, String?)])
        func envelopeShapes(body: String, rejected: Bool, code: String?) {
            let validator = ErrorEnvelopeValidator()
            do {
                try validator.validate(.status(200, body: body, contentType: "application/json"), context: RequestContext())
                #expect(!rejected)
            } catch NetworkError.rejected(let problem) {
                #expect(rejected)
                #expect(problem.code == code)
            } catch {
                Issue.record("unexpected \(error)")
            }
        }

        @Test("a validator's own error becomes .decoding; validators run in order and only on accepted responses")
        func customValidators() async throws {
            struct MissingHeader: Error {}
            let calls = Locked<[String]>([])
            let first = AnyResponseValidator { _, _ in calls.withLock { $0.append("first") } }
            let second = AnyResponseValidator { response, _ in
                calls.withLock { $0.append("second") }
                if response.headers["X-Signature"] == nil { throw MissingHeader() }
            }
            let stub = StubTransport(responses: [.json("{}"), .json("{}", status: 500)])
            let client = CoreFixture.client(stub) { $0.validators = [first, second] }
            let error = await CoreFixture.networkError { try await client.send(Request<EmptyResponse>.get("/signed")) }
            guard case .decoding(let failure)? = error else {
                Issue.record("expected decoding, got \(String(describing: error))")
                return
            }
            #expect(failure.underlying is MissingHeader)
            #expect(calls.current == ["first", "second"])
            let serverError = await CoreFixture.networkError { try await client.send(Request<EmptyResponse>.get("/signed")) }
            #expect(serverError?.statusCode == 500)
            #expect(calls.current == ["first", "second"], "validators do not run on rejected statuses")
        }

        @Test("conveniences send the right method, path and body and decode the result")
        func conveniences() async throws {
            let stub = StubTransport { request in
                request.httpMethod == "DELETE" && request.url?.path.hasSuffix("/2") == true
                    ? .status(204) : .json(#"{"id":1,"name":"A"}"#)
            }
            let client = CoreFixture.client(stub)
            let got: Item = try await client.get("/items/1", query: ["expand": "tags"])
            let created: Item = try await client.post("/items", body: ["name": "A"])
            try await client.post("/items/1/touch")
            let replaced: Item = try await client.put("/items/1", body: ["name": "A"])
            try await client.put("/items/1/flag")
            let patched: Item = try await client.patch("/items/1", body: ["name": "A"])
            try await client.patch("/items/1/flag")
            try await client.delete("/items/2")
            let deleted: Item = try await client.delete("/items/1")
            #expect([got, created, replaced, patched, deleted].allSatisfy { $0 == Item(id: 1, name: "A") })
            #expect(
                stub.requests.map { "\($0.httpMethod ?? "") \($0.url?.path ?? "")" } == [
                    "GET /v1/items/1", "POST /v1/items", "POST /v1/items/1/touch", "PUT /v1/items/1", "PUT /v1/items/1/flag",
                    "PATCH /v1/items/1", "PATCH /v1/items/1/flag", "DELETE /v1/items/2", "DELETE /v1/items/1",
                ])
            #expect(stub.requests.first?.url?.query == "expand=tags")
            #expect(
                stub.requests.map { $0.httpBody.map { String(decoding: $0, as: UTF8.self) } } == [
                    nil, #"{"name":"A"}"#, nil, #"{"name":"A"}"#, nil, #"{"name":"A"}"#, nil, nil, nil,
                ])
        }

        @Test("URL conveniences go to the absolute URL as given, keeping its encoding")
        func urlConveniences() async throws {
            let stub = StubTransport { request in
                request.httpMethod == "DELETE" ? .status(204) : .json(#"{"id":1,"name":"A"}"#)
            }
            let client = CoreFixture.client(stub)
            let url = try #require(URL(string: "https://cdn.example.test/files/a%20b?sig=x%2By"))
            let got: Item = try await client.get(url, query: ["v": "2"])
            let posted: Item = try await client.post(url, body: ["name": "A"])
            try await client.post(url)
            let put: Item = try await client.put(url, body: ["name": "A"])
            let patched: Item = try await client.patch(url, body: ["name": "A"])
            try await client.delete(url)
            #expect([got, posted, put, patched].allSatisfy { $0.id == 1 })
            #expect(stub.requests.map { $0.httpMethod ?? "" } == ["GET", "POST", "POST", "PUT", "PATCH", "DELETE"])
            #expect(CoreFixture.urlString(stub.requests.first) == "https://cdn.example.test/files/a%20b?sig=x%2By&v=2")
            #expect(
                stub.requests.dropFirst().allSatisfy {
                    CoreFixture.urlString($0) == "https://cdn.example.test/files/a%20b?sig=x%2By"
                })
        }

        @Test("send(_:) and response(for:) on Request values infer the type from context")
        func inference() async throws {
            let stub = StubTransport { _ in .json(#"[{"id":1,"name":"A"},{"id":2,"name":"B"}]"#) }
            let client = CoreFixture.client(stub)
            let items: [Item] = try await client.send(.get("/items"))
            #expect(items.map(\.id) == [1, 2])
        }
    }
}
