import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// Hundreds of calls started at once through one client, counted by the reference server.
///
/// On Linux, URLSession's task calls wait for a work queue every session of the process shares.
/// When each call waited on a dispatch queue of its own, 256 calls at once took every one of
/// libdispatch's overcommit threads (255), none was left to drain that work queue, and the process
/// hung for good (240 calls ended in 0.28 s). Every call must end, and be sent once.
@Suite("Many calls at once: every one ends, each sent once")
struct ManyCallsAtOnceTests {
    /// Distinct URLs, so the client's deduplication of identical GETs does not merge them.
    @Test("400 GETs started at once through one client all succeed, and the server got 400", .timeLimit(.minutes(2)))
    func fourHundredCallsAtOnceAllEnd() async throws {
        let (client, namespace) = try TestServers.apiClient(namespace: TestServers.makeNamespace("many"))
        let calls = 400
        let succeeded = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<calls {
                group.addTask {
                    let response = try await client.send(Request.raw(.get, "/items/1", query: ["call": "\(index)"]))
                    return response.statusCode == 200
                }
            }
            var succeeded = 0
            for try await ok in group where ok { succeeded += 1 }
            return succeeded
        }
        #expect(succeeded == calls)
        #expect(try await TestServers.requestCount("GET /items/{id}", namespace: namespace) == calls)
    }

    /// The same for streamed calls (the head, then the body read to its end).
    @Test("300 streamed GETs started at once all get their whole body, and the server got 300", .timeLimit(.minutes(2)))
    func threeHundredStreamsAtOnceAllEnd() async throws {
        let (client, namespace) = try TestServers.apiClient(namespace: TestServers.makeNamespace("many-streams"))
        let calls = 300
        let expected = try await client.send(Request.raw(.get, "/items/1")).data
        let whole = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<calls {
                group.addTask {
                    let response = try await client.stream(Request.raw(.get, "/items/1", query: ["call": "\(index)"]))
                    var body = Data()
                    for try await chunk in response.body { body.append(chunk) }
                    return response.statusCode == 200 && body == expected
                }
            }
            var whole = 0
            for try await ok in group where ok { whole += 1 }
            return whole
        }
        #expect(whole == calls)
        #expect(try await TestServers.requestCount("GET /items/{id}", namespace: namespace) == calls + 1)
    }
}
