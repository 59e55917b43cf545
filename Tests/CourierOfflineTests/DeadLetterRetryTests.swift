import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierOffline

/// Retrying a dead letter never loses a newer change and never sends one key with two payloads.
@Suite("Offline dead letters retried")
struct DeadLetterRetryTests {
    /// Answers with the next status of `statuses` and records (key, body) of every request.
    final class Server: Sendable {
        let sent = Locked<[(key: String, body: String)]>([])
        let statuses: Locked<[Int]>
        init(_ statuses: [Int]) { self.statuses = Locked(statuses) }
        var transport: StubTransport {
            StubTransport { [self] request in
                let body = request.httpBody.map { String(decoding: $0, as: UTF8.self) } ?? ""
                sent.withLock { $0.append((request.value(forHTTPHeaderField: "Idempotency-Key") ?? "", body)) }
                let status = statuses.withLock { $0.isEmpty ? 201 : $0.removeFirst() }
                return .status(status)
            }
        }
    }

    func queue(_ dir: TemporaryDirectory, _ server: Server) throws -> MutationQueue {
        let client = APIClient(environment: APIEnvironment(name: "prod", baseURL: URL(string: "https://api.example.com")!)) {
            $0.transport = server.transport
            $0.interceptors = .standard()
        }
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        configuration.clock = TestClock(mode: .manual)
        return try MutationQueue(path: dir.path("q.sqlite"), client: client, configuration: configuration)
    }

    func mutation(_ id: String, _ body: String) -> Mutation {
        Mutation(id: id, method: .post, path: "/mutations", body: Data(body.utf8))
    }

    /// A queue in `dir` whose mutation `a` (`v1`) was dead-lettered by a 422 under key `a`.
    func queueWithALetter(_ dir: TemporaryDirectory) async throws -> (MutationQueue, Server) {
        let server = Server([422])
        let queue = try queue(dir, server)
        try await queue.enqueue(mutation("a", "v1"))
        _ = try await queue.flush()
        return (queue, server)
    }

    @Test func anEditOfARetriedLetterGetsAKeyPastEveryKeyTheIDWasSpentUnder() async throws {
        // v1 is dead-lettered under "a"; v2 is delivered under "a~1"; the letter is retried (back
        // under "a") and edited: v3 must not go out under "a~1", which the server holds with v2.
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let (queue, server) = try await queueWithALetter(dir)
        try await queue.enqueue(mutation("a", "v2"))
        _ = try await queue.flush()
        try await queue.retryDeadLetter(id: "a")
        try await queue.enqueue(mutation("a", "v3"))
        _ = try await queue.flush()
        let sent = server.sent.current
        #expect(sent.map(\.body) == ["v1", "v2", "v3"])
        var payloads: [String: Set<String>] = [:]
        for request in sent { payloads[request.key, default: []].insert(request.body) }
        #expect(payloads.values.allSatisfy { $0.count == 1 }, "one key, one payload: \(sent)")
    }

    @Test func retryingALetterWhileANewerChangeIsPendingIsRefusedAndKeepsTheChange() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let (queue, _) = try await queueWithALetter(dir)
        #expect(try await queue.deadLetters().map(\.mutation.id) == ["a"])
        try await queue.enqueue(mutation("a", "v2-newer"))
        await #expect(throws: MutationQueueError.self) { try await queue.retryDeadLetter(id: "a") }
        #expect(try await queue.pending().map(\.mutation.body) == [Data("v2-newer".utf8)])
        #expect(try await queue.deadLetters().count == 1)
    }

    @Test func aRetriedLetterGoesOutUnderTheKeyItWasLastSentWith() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let server = Server([503, 422])
        let queue = try queue(dir, server)
        try await queue.enqueue(mutation("b", "v1"))
        _ = try await queue.flush()  // 503: b/v1 may have been applied
        try await queue.enqueue(mutation("b", "v2"))  // so v2 goes out as b~1
        _ = try await queue.flush()  // 422: dead letter
        try await queue.retryDeadLetter(id: "b")
        _ = try await queue.flush()
        let sent = server.sent.current
        #expect(sent.map(\.key) == ["b", "b~1", "b~1"])
        #expect(sent.map(\.body) == ["v1", "v2", "v2"])
        var bodies: [String: Set<String>] = [:]
        for request in sent { bodies[request.key, default: []].insert(request.body) }
        #expect(bodies.values.allSatisfy { $0.count == 1 }, "one key, one payload: \(sent)")
    }
}
