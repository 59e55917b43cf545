import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// Record real traffic from the reference server into a HAR fixture, then replay it offline.
@Suite("Record and replay against the reference server")
struct RecordReplayIntegrationTests {
    struct Echo: Decodable, Sendable {
        var headers: [String: String]
        var bodySize: Int
    }

    @Test func aRecordedSessionHoldsNoSecretAndReplaysOfflineWithTheSameValues() async throws {
        let recorder = HARFixtureRecorder()
        let (client, namespace) = try TestServers.apiClient { $0.interceptors.append(recorder) }
        var item = Request<HTTPResponse>.raw(.get, "/items/1")
        item.pathTemplate = "/items/{id}"
        let body = Data(#"{"user":{"name":"ann","password":"SECRET-PW"}}"#.utf8)
        let echo = Request<Echo>(
            method: .post, path: "/echo", query: ["access_token": "SECRET-QUERY", "page": "1"],
            headers: ["Authorization": "Bearer SECRET-TOKEN", "Cookie": "sid=SECRET-SID"],
            body: .data(body, contentType: "application/json"))

        let live = try await client.response(for: item)
        let liveEcho = try await client.send(echo)
        // Server-side truth: the secrets really went over the wire, each call once.
        #expect(liveEcho.headers.first { $0.key.lowercased() == "authorization" }?.value == "Bearer SECRET-TOKEN")
        #expect(try await TestServers.requestCount("GET /items/{id}", namespace: namespace) == 1)
        #expect(try await TestServers.requestCount("POST /echo", namespace: namespace) == 1)

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("record-\(UUID().uuidString).har")
        defer { try? FileManager.default.removeItem(at: file) }
        try recorder.write(to: file)
        let bytes = try Data(contentsOf: file)
        #expect(bytes.range(of: Data("SECRET-".utf8)) == nil, "a secret reached the fixture file")
        #expect(recorder.entryCount == 2)

        // Offline: another base URL, no server, different secrets.
        let replay = try ReplayTransport(contentsOf: file, order: .inOrder)
        let offline = APIClient(environment: APIEnvironment(name: "offline", baseURL: URL(string: "https://api.example.test")!)) {
            $0.transport = replay
        }
        let replayed = try await offline.response(for: item)
        #expect(replayed.statusCode == live.statusCode)
        #expect(replayed.response.data == live.response.data, "an item has no secret: its body is replayed byte for byte")
        var otherSecrets = echo
        otherSecrets.headers["Authorization"] = "Bearer OTHER-TOKEN"
        otherSecrets.query = ["access_token": "OTHER-QUERY", "page": "1"]
        let replayedEcho = try await offline.send(otherSecrets)
        #expect(replayedEcho.bodySize == liveEcho.bodySize)
        let replayedToken = replayedEcho.headers.first { $0.key.lowercased() == "authorization" }?.value ?? ""
        #expect(replayedToken.contains("<redacted>") && !replayedToken.contains("SECRET"))
        #expect(replay.unusedEntries.isEmpty)
        #expect(try await TestServers.requestCount("GET /items/{id}", namespace: namespace) == 1, "replay sent nothing")
    }
}
