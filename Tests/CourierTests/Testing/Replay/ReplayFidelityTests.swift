import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// Record and replay keep what the server sent and answer each request with its own entry:
    /// exact bytes of non-UTF-8 text, archives from other tools, the closest of several matching
    /// entries, secrets kept out of every field.
    @Suite(.timeLimit(.minutes(1))) struct ReplayFidelity {
        struct Item: Codable, Equatable, Sendable {
            var id: Int
            var name: String
        }

        struct GetItem: Endpoint {
            typealias Response = Item
            let id: Int
            var path: String { "/items/\(id)" }
            var pathTemplate: String? { "/items/{id}" }
        }

        struct GetUserItem: Endpoint {
            typealias Response = Item
            let user: Int
            let id: Int
            var path: String { "/users/\(user)/items/\(id)" }
            var pathTemplate: String? { "/users/{user}/items/{id}" }
        }

        /// A server that names each item after the path it was asked for.
        static func server() -> StubTransport {
            StubTransport { request in
                let path = request.url?.path ?? ""
                let id = request.url?.lastPathComponent ?? "0"
                return .json(#"{"id": \#(id), "name": "\#(path)"}"#)
            }
        }

        static func replayClient(_ replay: ReplayTransport) -> APIClient {
            APIClient(environment: APIEnvironment(name: "replay", baseURL: URL(string: "https://api.example.test/v1")!)) {
                $0.transport = replay
            }
        }

        // MARK: HAR fixtures

        @Test("a text body that is not UTF-8 (Latin-1) replays with the bytes the server sent")
        func latin1BodyReplaysByteForByte() async throws {
            let latin1 = Data([0x63, 0x61, 0x66, 0xE9])  // "café" in ISO-8859-1
            let recorder = HARFixtureRecorder()
            let server = StubTransport { _ in
                HTTPResponse(statusCode: 200, headers: ["Content-Type": "text/plain; charset=iso-8859-1"], body: latin1)
            }
            let client = CoreFixture.client(server) { $0.interceptors.append(recorder) }
            #expect(try await client.send(Request<Data>.get("/menu")) == latin1)

            let replay = ReplayTransport(archive: recorder.archive())
            let replayed = try await Self.replayClient(replay).send(Request<Data>.get("/menu"))
            #expect(replayed == latin1, "replayed: \(String(decoding: replayed, as: UTF8.self))")
        }

        @Test("a HAR 1.2 archive whose timings omit blocked/dns/connect/ssl and whose postData has params, no text, loads")
        func specValidHARLoads() throws {
            // HAR 1.2: timings.blocked/dns/connect/ssl are optional; postData.text and
            // postData.params are mutually exclusive.
            let har = #"""
                {"log": {"version": "1.2", "creator": {"name": "hand", "version": "1"},
                  "entries": [{
                    "startedDateTime": "2026-05-25T22:46:27.580Z", "time": 12.5,
                    "request": {"method": "POST", "url": "https://api.example.test/v1/login", "httpVersion": "HTTP/1.1",
                      "cookies": [], "headers": [], "queryString": [],
                      "postData": {"mimeType": "application/x-www-form-urlencoded",
                                   "params": [{"name": "user", "value": "ann"}]},
                      "headersSize": -1, "bodySize": 8},
                    "response": {"status": 200, "statusText": "OK", "httpVersion": "HTTP/1.1", "cookies": [],
                      "headers": [{"name": "Content-Type", "value": "application/json"}],
                      "content": {"size": 2, "mimeType": "application/json", "text": "{}"},
                      "redirectURL": "", "headersSize": -1, "bodySize": 2},
                    "cache": {},
                    "timings": {"send": 0.5, "wait": 11, "receive": 1}
                  }]}}
                """#
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("spec-\(UUID().uuidString).har")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data(har.utf8).write(to: file)
            #expect(throws: Never.self) { _ = try HARContract.archive(contentsOf: file) }
            #expect(throws: Never.self) { _ = try ReplayTransport(contentsOf: file) }
        }

        @Test("by match: a request gets the entry recorded for its own path, not another id's")
        func replayPrefersTheExactPath() async throws {
            let recorder = HARFixtureRecorder()
            let client = CoreFixture.client(Self.server()) { $0.interceptors.append(recorder) }
            _ = try await client.send(GetItem(id: 7))
            _ = try await client.send(GetItem(id: 42))

            let replay = ReplayTransport(archive: recorder.archive())
            let replayClient = Self.replayClient(replay)
            let item = try await replayClient.send(GetItem(id: 42))
            #expect(item.id == 42, "asked for item 42, got \(item)")
        }

        @Test("by match: /users/{user}/items/{id} is not answered by an /items/{id} entry")
        func replayDoesNotTakeAShorterTemplate() async throws {
            let recorder = HARFixtureRecorder()
            let client = CoreFixture.client(Self.server()) { $0.interceptors.append(recorder) }
            _ = try await client.send(GetItem(id: 3))
            _ = try await client.send(GetUserItem(user: 5, id: 3))

            let replay = ReplayTransport(archive: recorder.archive())
            let replayClient = Self.replayClient(replay)
            let userItem = try await replayClient.send(GetUserItem(user: 5, id: 3))
            #expect(userItem.name == "/v1/users/5/items/3", "got the response recorded for \(userItem.name)")
            // And the session as a whole replays, in this order too.
            #expect(try await replayClient.send(GetItem(id: 3)).name == "/v1/items/3")
        }

        @Test("no secret reaches the fixture: a token in the path of a call without a template")
        func tokenInPathIsNotWritten() async throws {
            let recorder = HARFixtureRecorder()
            let client = CoreFixture.client(StubTransport { _ in .status(204) }) { $0.interceptors.append(recorder) }
            // Revoking the token the call is authorised with (RFC 7009 style, by path).
            let revoke = Request<Void>(
                method: .delete, path: "/tokens/SECRET-TOKEN-9f2c", headers: ["Authorization": "Bearer SECRET-TOKEN-9f2c"])
            try await client.send(revoke)
            let text = String(decoding: try recorder.jsonData(), as: UTF8.self)
            #expect(!text.contains("SECRET-TOKEN"), "\(text)")
        }

        @Test("a recorded query value scrubbed as a learned secret still matches the same live request")
        func scrubbedQueryStillMatches() async throws {
            struct Contact: Codable, Equatable, Sendable {
                var name: String
                var phone: String
            }
            let recorder = HARFixtureRecorder()
            let server = StubTransport { _ in .json(#"[{"name": "Ann", "phone": "5551234567"}]"#) }
            let client = CoreFixture.client(server) { $0.interceptors.append(recorder) }
            let search = Request<[Contact]>.get("/contacts/search", query: ["q": "5551234567"])
            _ = try await client.send(search)

            let replay = ReplayTransport(archive: recorder.archive())
            let contacts = try await Self.replayClient(replay).send(search)
            #expect(contacts.map(\.name) == ["Ann"])
        }
    }
}
