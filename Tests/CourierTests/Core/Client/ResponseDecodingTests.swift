import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// How accepted responses become values: empty bodies, decoding failures, coders, tuners
    /// (issue 2, items 6 and 8, through the client).
    @Suite struct ResponseDecoding {
        typealias Item = CoreFixture.Item

        static let noContent = HTTPResponse(statusCode: 204, headers: ["Content-Length": "0"])

        @Test("204 with Content-Length: 0 succeeds for Void and EmptyResponse")
        func emptyTypes() async throws {
            let stub = StubTransport(responses: [Self.noContent, Self.noContent])
            let client = CoreFixture.client(stub)
            try await client.send(Request<Void>.delete("/items/1"))
            let empty = try await client.send(Request<EmptyResponse>.delete("/items/1"))
            #expect(empty == EmptyResponse())
            #expect(stub.requests.map(\.httpMethod) == ["DELETE", "DELETE"])
        }

        @Test(
            "an empty body gives nil for an Optional response type",
            arguments: [204, 205, 200])
        func optionalNil(status: Int) async throws {
            let stub = StubTransport(responses: [HTTPResponse(statusCode: status)])
            let value = try await CoreFixture.client(stub).send(Request<Item?>.get("/items/1"))
            #expect(value == nil)
        }

        @Test("an Optional response type still decodes a body")
        func optionalValue() async throws {
            let stub = StubTransport(responses: [.json(#"{"id":3,"name":"C"}"#)])
            #expect(try await CoreFixture.client(stub).send(Request<Item?>.get("/items/3")) == Item(id: 3, name: "C"))
        }

        @Test(
            "a model on an empty body fails with the empty-body decoding error, not a JSON syntax error",
            arguments: [204, 200])
        func modelOnEmptyBody(status: Int) async throws {
            let stub = StubTransport(responses: [HTTPResponse(statusCode: status, headers: ["Content-Length": "0"])])
            let error = await CoreFixture.networkError {
                try await CoreFixture.client(stub).send(Request<Item>.delete("/items/1"))
            }
            guard case .decoding(let failure)? = error else {
                Issue.record("expected decoding, got \(String(describing: error))")
                return
            }
            #expect(failure.isEmptyBody)
            #expect(failure.statusCode == status)
            #expect(failure.typeName.contains("Item"))
            #expect(failure.description.contains("empty body"))
        }

        @Test("HEAD: Void succeeds and a model is the empty-body error even if a body arrived")
        func head() async throws {
            let stub = StubTransport { _ in .json(#"{"id":1,"name":"A"}"#) }
            let client = CoreFixture.client(stub)
            try await client.send(Request<Void>.head("/items/1"))
            #expect(stub.requests.first?.httpMethod == "HEAD")
            let error = await CoreFixture.networkError {
                try await client.send(Request<Item>(method: .head, path: "/items/1"))
            }
            guard case .decoding(let failure)? = error else {
                Issue.record("expected decoding, got \(String(describing: error))")
                return
            }
            #expect(failure.isEmptyBody)
        }

        @Test("strict decoding names the failing path items[1].name")
        func strictCodingPath() async throws {
            let stub = StubTransport(responses: [.json(#"{"items":[{"id":1,"name":"A"},{"id":2},{"id":3,"name":"C"}]}"#)])
            let error = await CoreFixture.networkError {
                try await CoreFixture.client(stub).send(Request<CoreFixture.ItemList>.get("/lossy"))
            }
            guard case .decoding(let failure)? = error else {
                Issue.record("expected decoding, got \(String(describing: error))")
                return
            }
            #expect(failure.codingPath == "items[1].name")
            #expect(!failure.isEmptyBody)
            #expect(failure.underlying is DecodingError)
            #expect(failure.bodySnippet.hasPrefix(#"{"items":"#))
            #expect(failure.description.contains("items[1].name"))
        }

        @Test("malformed JSON is a decoding error at <root>")
        func malformedJSON() async throws {
            let stub = StubTransport(responses: [.json("{not json")])
            let error = await CoreFixture.networkError { try await CoreFixture.client(stub).send(Request<Item>.get("/x")) }
            guard case .decoding(let failure)? = error else {
                Issue.record("expected decoding, got \(String(describing: error))")
                return
            }
            #expect(failure.codingPath == "<root>")
        }

        struct SnakeItem: Decodable, Equatable, Sendable {
            var itemId: Int
            var displayName: String
        }

        @Test("a per-request decoder override (convertFromSnakeCase) applies to that call only")
        func decoderOverride() async throws {
            let body = #"{"item_id":7,"display_name":"Seven"}"#
            let stub = StubTransport { _ in .json(body) }
            let client = CoreFixture.client(stub)
            let decoder = JSONDecoder()
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            let value = try await client.send(Request<SnakeItem>.get("/legacy").decoder(decoder))
            #expect(value == SnakeItem(itemId: 7, displayName: "Seven"))
            // The client's own decoder is unchanged.
            let error = await CoreFixture.networkError { try await client.send(Request<SnakeItem>.get("/legacy")) }
            guard case .decoding(let failure)? = error else {
                Issue.record("expected decoding, got \(String(describing: error))")
                return
            }
            #expect(failure.codingPath == "itemId")
        }

        struct Payload: Encodable, Sendable {
            var itemId = 7
            var when = Date(timeIntervalSince1970: 0)
        }

        @Test("a per-request encoder override changes only that call's body")
        func encoderOverride() async throws {
            let stub = StubTransport { _ in .status(204) }
            let client = CoreFixture.client(stub)
            let encoder = JSONEncoder()
            encoder.keyEncodingStrategy = .convertToSnakeCase
            encoder.dateEncodingStrategy = .secondsSince1970
            encoder.outputFormatting = [.sortedKeys]
            try await client.send(Request<Void>.post("/legacy", body: Payload()).encoder(encoder))
            try await client.send(Request<Void>.post("/modern", body: Payload()))
            let bodies = stub.requests.map { String(decoding: $0.httpBody ?? Data(), as: UTF8.self) }
            #expect(bodies == [#"{"item_id":7,"when":0}"#, #"{"itemId":7,"when":"1970-01-01T00:00:00.000Z"}"#])
        }

        @Test("modifyRequest runs last on the built URLRequest")
        func modifyRequest() async throws {
            let stub = StubTransport { _ in .status(204) }
            let client = CoreFixture.client(stub) { $0.headers = ["X-Trace": "default"] }
            let request = Request<Void>.get("/x").modifyRequest { request in
                request.setValue("tuned", forHTTPHeaderField: "X-Trace")
                request.setValue("text/csv", forHTTPHeaderField: "Accept")
                request.timeoutInterval = 7
            }
            try await client.send(request)
            let sent = try #require(stub.requests.first)
            #expect(sent.value(forHTTPHeaderField: "X-Trace") == "tuned")
            #expect(sent.value(forHTTPHeaderField: "Accept") == "text/csv")
            #expect(sent.timeoutInterval == 7)
            // X-Request-ID is added by the pipeline afterwards.
            #expect(sent.value(forHTTPHeaderField: "X-Request-ID") != nil)
        }

        struct ItemWithDate: Decodable, Sendable {
            var at: Date
        }

        @Test(
            "the client's decoder parses ISO 8601 variants (fraction, Z, offset, date-only)",
            arguments: [
                ("2026-05-25T22:46:27.580497Z", 1_779_749_187.580497),
                ("2026-05-25T22:46:27Z", 1_779_749_187),
                ("2026-05-25T22:46:27+02:00", 1_779_741_987),
                ("2026-05-25", 1_779_667_200),
            ])
        func dates(text: String, seconds: Double) async throws {
            let stub = StubTransport(responses: [.json(#"{"at":"\#(text)"}"#)])
            let value = try await CoreFixture.client(stub).send(Request<ItemWithDate>.get("/dates"))
            #expect(abs(value.at.timeIntervalSince1970 - seconds) < 0.000_01)
        }

        @Test("Response carries the value, the HTTP response and the context")
        func responseEnvelope() async throws {
            let stub = StubTransport(responses: [.json(#"{"id":1,"name":"A"}"#, status: 201, headers: ["Location": "/items/1"])])
            let response = try await CoreFixture.client(stub).response(for: Request<Item>.post("/items", body: ["name": "A"]))
            #expect(response.value == Item(id: 1, name: "A"))
            #expect(response.statusCode == 201)
            #expect(response.response.headers["location"] == "/items/1")
            #expect(response.context.attempt == 1)
            #expect(response.context.method == .post)
            #expect(response.context.pathTemplate == "/items")
        }

        struct GetItem: Endpoint {
            typealias Response = Item
            let id: Int
            var path: String { "/items/\(id)" }
            var pathTemplate: String? { "/items/{id}" }
            var policy: EndpointPolicy { .authorizedRead.with(\.auth, .optional) }
        }

        @Test("an Endpoint type: path, template and policy reach the context")
        func endpointType() async throws {
            let stub = StubTransport(responses: [.json(#"{"id":42,"name":"Lamp"}"#)])
            let response = try await CoreFixture.client(stub).response(for: GetItem(id: 42))
            #expect(response.value == Item(id: 42, name: "Lamp"))
            #expect(response.context.pathTemplate == "/items/{id}")
            #expect(response.context.policy == .authorizedRead.with(\.auth, .optional))
            #expect(CoreFixture.urlString(stub.requests.first) == "https://api.example.test/v1/items/42")
        }

        @Test("HTTPResponse as a response type returns the response as received")
        func rawResponseType() async throws {
            let stub = StubTransport(responses: [.status(200, body: "plain", contentType: "text/plain")])
            let response = try await CoreFixture.client(stub).send(Request<HTTPResponse>(path: "/t") { r, _ in r })
            #expect(response.mediaType == "text/plain")
            #expect(response.bodySnippet() == "plain")
        }
    }
}
