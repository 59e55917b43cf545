import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// Record and replay: HARFixtureRecorder writes redacted whole-body fixtures, ReplayTransport
    /// answers from them offline with strict matching.
    @Suite struct ReplayFixtures {
        struct Item: Codable, Equatable, Sendable {
            var id: Int
            var name: String
        }

        struct GetItem: Endpoint {
            typealias Response = Item
            let id: Int
            var path: String { "/items/\(id)" }
            var pathTemplate: String? { "/items/{id}" }
            var query: Query { ["lang": "en"] }
        }

        struct CreateItem: Endpoint {
            typealias Response = Item
            let name: String
            var path: String { "/items" }
            var method: HTTPMethod { .post }
            var body: RequestBody { .data(Data(#"{"name":"\#(name)"}"#.utf8), contentType: "application/json") }
        }

        /// A server stand-in answering items and echoing created ones.
        static func server() -> StubTransport {
            StubTransport { request in
                if request.httpMethod == "POST" {
                    let sent = try JSONDecoder().decode([String: String].self, from: request.httpBody ?? Data())
                    return .json(#"{"id": 7, "name": "\#(sent["name"] ?? "")"}"#, status: 201)
                }
                let id = request.url?.lastPathComponent ?? "0"
                return .json(#"{"id": \#(id), "name": "Lamp \#(id)"}"#)
            }
        }

        /// Records `calls` against the stand-in server and returns the archive.
        static func record(_ calls: (APIClient) async throws -> Void) async throws -> HARLog {
            let recorder = HARFixtureRecorder()
            let client = CoreFixture.client(server()) { $0.interceptors.append(recorder) }
            try await calls(client)
            return recorder.archive()
        }

        static func replayClient(_ replay: ReplayTransport) -> APIClient {
            APIClient(environment: APIEnvironment(name: "replay", baseURL: URL(string: "https://other.example.test/api/v2")!)) {
                $0.transport = replay
            }
        }

        @Test("a recorded session replays offline under another base URL, every entry used")
        func recordThenReplay() async throws {
            let archive = try await Self.record { client in
                _ = try await client.send(GetItem(id: 1))
                _ = try await client.send(CreateItem(name: "Desk"))
            }
            let replay = ReplayTransport(archive: archive)
            let client = Self.replayClient(replay)
            #expect(try await client.send(CreateItem(name: "Desk")) == Item(id: 7, name: "Desk"))
            #expect(try await client.send(GetItem(id: 1)) == Item(id: 1, name: "Lamp 1"))
            #expect(replay.unusedEntries.isEmpty)
            #expect(replay.unusedEntriesReport == "")
            #expect(replay.mismatches.isEmpty)
        }

        @Test("the path template matches any id; exact path matching does not")
        func pathMatching() async throws {
            let archive = try await Self.record { _ = try await $0.send(GetItem(id: 1)) }
            let byTemplate = ReplayTransport(archive: archive)
            #expect(try await Self.replayClient(byTemplate).send(GetItem(id: 99)) == Item(id: 1, name: "Lamp 1"))
            let exact = ReplayTransport(archive: archive, pathMatching: .exact)
            let error = await CoreFixture.networkError { try await Self.replayClient(exact).send(GetItem(id: 1)) }
            #expect(error != nil, "the base URL's path differs, so the exact path does not match")
            #expect(exact.mismatches.count == 1)
        }

        @Test("an unmatched request fails with a diff against the closest recorded request")
        func mismatchDiff() async throws {
            let archive = try await Self.record { _ = try await $0.send(CreateItem(name: "Desk")) }
            let replay = ReplayTransport(archive: archive)
            var request = URLRequest(url: URL(string: "https://other.example.test/items?page=2")!)
            request.httpMethod = "POST"
            request.httpBody = Data(#"{"name":"Chair"}"#.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            let mismatch = await #expect(throws: ReplayMismatch.self) { try await replay.send(request) }
            let lines = try #require(mismatch).description.split(separator: "\n").map(String.init)
            #expect(lines[0].hasPrefix("ReplayTransport: no recorded response matches POST /items?page=2 (body sha256:"))
            #expect(lines[1] == "closest: #0 POST /items → 201")
            #expect(lines[2] == "  method  same     POST")
            #expect(lines[3] == "  path    same     /items")
            #expect(lines[4] == "  query   differs  recorded (none)")
            #expect(lines[5] == "                   request  page=2")
            #expect(lines[6].hasPrefix("  body    differs  recorded sha256:"))
            #expect(lines[8] == #"  recorded body: {"name":"Desk"}"#)
            #expect(lines[9] == #"  request body:  {"name":"Chair"}"#)
            #expect(replay.mismatches == [try #require(mismatch)])
            // Through a client the diff is the transport error's description.
            let error = await CoreFixture.networkError { try await Self.replayClient(replay).send(CreateItem(name: "Sofa")) }
            #expect(String(describing: error).contains("closest: #0 POST /items → 201"))
        }

        @Test("recorded responses the run did not ask for are reported")
        func unusedReport() async throws {
            let archive = try await Self.record { client in
                _ = try await client.send(GetItem(id: 1))
                _ = try await client.send(GetItem(id: 2))
                _ = try await client.send(CreateItem(name: "Desk"))
            }
            let replay = ReplayTransport(archive: archive)
            _ = try await Self.replayClient(replay).send(GetItem(id: 1))
            #expect(replay.unusedEntries.map(\.index) == [1, 2])
            #expect(
                replay.unusedEntriesReport
                    == "2 recorded responses not used:\n  #1 GET /items/{id}?lang=en → 200\n  #2 POST /items → 201")
        }

        @Test("in order: a request that skips ahead names the entry that comes first")
        func inOrder() async throws {
            let archive = try await Self.record { client in
                _ = try await client.send(GetItem(id: 1))
                _ = try await client.send(CreateItem(name: "Desk"))
            }
            let replay = ReplayTransport(archive: archive, order: .inOrder)
            _ = await CoreFixture.networkError { try await Self.replayClient(replay).send(CreateItem(name: "Desk")) }
            let mismatch = try #require(replay.mismatches.first)
            #expect(mismatch.closest?.index == 0)
            #expect(mismatch.description.hasSuffix("out of order: entry #1 matches, but #0 comes first"))
        }

        @Test("each entry answers once; a repeat says the match was used")
        func usedOnce() async throws {
            let archive = try await Self.record { _ = try await $0.send(GetItem(id: 1)) }
            let replay = ReplayTransport(archive: archive)
            let client = Self.replayClient(replay)
            _ = try await client.send(GetItem(id: 1))
            _ = await CoreFixture.networkError { try await client.send(GetItem(id: 1)) }
            #expect(
                replay.mismatches.first?.description.hasSuffix("entry #0 matches but was already used (each entry answers once)")
                    == true)
        }

        @Test("no secret of the session is written to the fixture file, yet it still replays")
        func secretsNeverWritten() async throws {
            let recorder = HARFixtureRecorder()
            // The server echoes the token in its body and sets a session cookie.
            let server = StubTransport { request in
                let token = request.value(forHTTPHeaderField: "Authorization") ?? ""
                return .json(
                    #"{"id": 1, "name": "\#(token)", "access_token": "SECRET-ISSUED"}"#,
                    headers: ["Set-Cookie": "sid=SECRET-SID; Path=/; HttpOnly"])
            }
            let client = CoreFixture.client(server) { $0.interceptors.append(recorder) }
            let request = Request<Item>(
                method: .post, path: "/login", query: ["access_token": "SECRET-QUERY"],
                headers: ["Authorization": "Bearer SECRET-TOKEN", "Cookie": "sid=SECRET-SID"],
                body: .data(Data(#"{"user":"ann","password":"SECRET-PW"}"#.utf8), contentType: "application/json"))
            _ = try await client.send(request)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("replay-\(UUID().uuidString).har")
            defer { try? FileManager.default.removeItem(at: file) }
            try recorder.write(to: file)
            let bytes = try Data(contentsOf: file)
            #expect(bytes.range(of: Data("SECRET-".utf8)) == nil, "\(String(decoding: bytes, as: UTF8.self))")
            #expect(bytes.range(of: Data("<redacted>".utf8)) != nil)

            // Replay with other secrets: redaction on both sides keeps the match.
            let replay = try ReplayTransport(contentsOf: file)
            var other = request
            other.headers["Authorization"] = "Bearer OTHER-TOKEN"
            other.query = ["access_token": "OTHER-QUERY"]
            other.body = .data(Data(#"{"user":"ann","password":"OTHER-PW"}"#.utf8), contentType: "application/json")
            let item = try await Self.replayClient(replay).send(other)
            #expect(item.name.contains("<redacted>") && !item.name.contains("SECRET"))
        }

        @Test("binary bodies are kept as Base64 and replayed byte for byte")
        func binaryBody() async throws {
            let png = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF, 0x10])
            let recorder = HARFixtureRecorder()
            let server = StubTransport { _ in HTTPResponse(statusCode: 200, headers: ["Content-Type": "image/png"], body: png) }
            let client = CoreFixture.client(server) { $0.interceptors.append(recorder) }
            _ = try await client.send(Request<Data>.get("/avatar"))
            let replay = ReplayTransport(archive: recorder.archive())
            #expect(try await Self.replayClient(replay).send(Request<Data>.get("/avatar")) == png)
        }

        /// A model that fits what the server sends passes the contract check as it passes the
        /// client: an ISO 8601 date is read with the client's default date strategy, not as the
        /// number a plain `JSONDecoder` expects.
        @Test("contract: a recorded ISO 8601 date decodes as the client decodes it")
        func contractReadsDatesAsTheClientDoes() async throws {
            struct Listing: Decodable, Sendable {
                var id: Int
                var createdAt: Date
            }
            struct GetListing: Endpoint {
                typealias Response = Listing
                var path: String { "/listings/1" }
            }
            let recorder = HARFixtureRecorder()
            let server = StubTransport { _ in .json(#"{"id": 1, "createdAt": "2026-01-01T00:01:00.500Z"}"#) }
            let client = CoreFixture.client(server) { $0.interceptors.append(recorder) }
            let live = try await client.send(GetListing())

            let recorded = try HARContract.decodeResponses(of: GetListing(), in: recorder.archive())

            #expect(recorded.map(\.createdAt) == [live.createdAt])
        }

        @Test("contract: every recorded response decodes with its endpoint's Response type, or the entry is named")
        func contract() async throws {
            let archive = try await Self.record { client in
                _ = try await client.send(GetItem(id: 1))
                _ = try await client.send(GetItem(id: 2))
                _ = try await client.send(CreateItem(name: "Desk"))
            }
            #expect(try HARContract.decodeResponses(of: GetItem(id: 0), in: archive).map(\.id) == [1, 2])

            struct Strict: Decodable, Sendable {
                var id: Int
                var price: Double
            }
            struct GetStrict: Endpoint {
                typealias Response = Strict
                var path: String { "/items/{id}" }
                var pathValues: [String: String] { ["id": "0"] }
            }
            let failure = #expect(throws: HARContract.Failure.self) {
                try HARContract.decodeResponses(of: GetStrict(), in: archive)
            }
            #expect(
                failure?.description
                    == "2 recorded response(s) did not decode:\n  #0 GET /items/{id}?lang=en → 200: missing key 'price' at the top level\n  #1 GET /items/{id}?lang=en → 200: missing key 'price' at the top level"
            )
        }
    }
}
