import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// An interim response (RFC 9110 §15.2: `100 Continue`, `103 Early Hints`) before the final one
/// (`GET /hostile/interim`, TestServer/routes_hostile.py). FoundationNetworking hands the interim
/// head to the session delegate before the final head.
@Suite("Interim 1xx responses before the final one")
struct InterimResponseTests {
    /// Measured before the fix, over URLSessionTransport on Linux: the streamed call took the 1xx
    /// head as its answer and failed with `server error: HTTP 103` (the 200's body read as the
    /// 103's); buffered calls and CurlTransport were right.
    @Test("a streamed call answers with the final head and body, not the interim one", arguments: ["103", "100"])
    func streamedCallGetsTheFinalResponse(status: String) async throws {
        let (client, _) = try TestServers.apiClient()
        let request = Request<Data>.get("/hostile/interim", query: ["status": status])
            .policy(.standard.with(\.retry, .none).with(\.deadline, .seconds(30)))
        let streamed = try await client.stream(request)
        #expect(streamed.response.statusCode == 200)
        #expect(streamed.response.headers["X-Final"] == "yes")
        var body = Data()
        for try await chunk in streamed.body { body.append(chunk) }
        #expect(body == Data("final body".utf8))
    }

    @Test("a buffered call answers with the final head and body", arguments: ["103", "100"])
    func bufferedCallGetsTheFinalResponse(status: String) async throws {
        let (client, _) = try TestServers.apiClient()
        let request = Request<Data>.get("/hostile/interim", query: ["status": status])
            .policy(.standard.with(\.retry, .none).with(\.deadline, .seconds(30)))
        let response = try await client.response(for: request)
        #expect(response.statusCode == 200)
        #expect(response.response.headers["X-Final"] == "yes")
        #expect(response.value == Data("final body".utf8))
    }
}
