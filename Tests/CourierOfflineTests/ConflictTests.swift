import Foundation
import Testing
import Courier
import CourierTesting
import CourierOffline

/// 409 and 412 under each conflict policy, against the reference server's versioned entities
/// (`PUT /entities/{id}`: a stale `If-Match` → 412, a stale `baseVersion` → 409; both carry the
/// current entity).
@Suite("Offline conflicts (reference server)")
struct ConflictTests {
    struct Edit: Encodable {
        var value: String
        var baseVersion: Int?
    }

    /// A namespace whose entity `doc` is at version 2 (someone else edited it to "theirs").
    func setUp(_ prefix: String) async throws -> String {
        let namespace = OfflineServer.makeNamespace(prefix)
        let (status, _) = try await OfflineServer.control("PUT", "/entities/doc", namespace: namespace, json: ["value": "theirs"])
        #expect(status == 200)
        return namespace
    }

    func queue(_ dir: TemporaryDirectory, namespace: String, policy: ConflictPolicy) throws -> MutationQueue {
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        configuration.clock = TestClock(mode: .manual)
        configuration.kinds["doc"] = MutationQueue.KindPolicy(conflictPolicy: policy)
        return try MutationQueue(
            path: dir.path("q.sqlite"), client: makeClient(try OfflineServer.environment(namespace: namespace)),
            configuration: configuration)
    }

    func conflicts(_ events: [MutationEvent]) -> [ConflictResolution] {
        events.compactMap { if case .conflict(let resolution, _) = $0.outcome { resolution } else { nil } }
    }

    @Test func lastWriteWinsResendsWithoutThePrecondition() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = try await setUp("offline-lww")
        let queue = try queue(dir, namespace: namespace, policy: .lastWriteWins)
        let recorder = await EventRecorder(queue)
        try await queue.enqueue(
            .json(
                id: "edit-1", method: .put, path: "/entities/doc", body: Edit(value: "mine"),
                headers: ["If-Match": "\"v1\""], kind: "doc"))
        let report = try await queue.flush()
        #expect(report.sent == 1)
        #expect(try await OfflineServer.entity("doc", namespace: namespace) == (3, .string("mine")))
        #expect(
            await recorder.wait {
                self.conflicts($0) == [.resentWithoutPreconditions]
                    && $0.last.map { if case .sent(200) = $0.outcome { true } else { false } } == true
            })
        #expect(recorder.events.contains { if case .conflict(_, 412) = $0.outcome { true } else { false } })
        // The resend carried a new key: the server never saw one key with two payloads.
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.last?.key == "edit-1~1")
        #expect(log.mismatches == 0)
    }

    @Test func serverWinsDropsTheLocalChangeAndReportsIt() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = try await setUp("offline-server-wins")
        let queue = try queue(dir, namespace: namespace, policy: .serverWins)
        let recorder = await EventRecorder(queue)
        try await queue.enqueue(
            .json(id: "edit-1", method: .put, path: "/entities/doc", body: Edit(value: "mine", baseVersion: 1), kind: "doc"))
        let report = try await queue.flush()
        #expect(report.sent == 0)
        #expect(report.dropped == 1)
        #expect(report.pending == 0)
        #expect(try await queue.deadLetters().isEmpty)
        #expect(try await OfflineServer.entity("doc", namespace: namespace) == (2, .string("theirs")))
        #expect(await recorder.wait { self.conflicts($0) == [.serverWon] })
        #expect(recorder.events.contains { if case .conflict(.serverWon, 409) = $0.outcome { true } else { false } })
    }

    @Test func mergeSendsWhatTheCallbackReturns() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = try await setUp("offline-merge")
        let queue = try queue(
            dir, namespace: namespace,
            policy: .merge { conflict in
                struct Body: Decodable {
                    struct Current: Decodable {
                        var version: Int
                        var value: String?
                    }
                    var current: Current
                }
                let current = try JSONDecoder().decode(Body.self, from: conflict.response.body).current
                return try .json(
                    id: conflict.mutation.id, method: .put, path: conflict.mutation.path,
                    body: Edit(value: "\(current.value ?? "")+mine", baseVersion: current.version), kind: "doc")
            })
        let recorder = await EventRecorder(queue)
        try await queue.enqueue(
            .json(id: "edit-1", method: .put, path: "/entities/doc", body: Edit(value: "mine", baseVersion: 1), kind: "doc"))
        let report = try await queue.flush()
        #expect(report.sent == 1)
        #expect(try await OfflineServer.entity("doc", namespace: namespace) == (3, .string("theirs+mine")))
        #expect(await recorder.wait { self.conflicts($0) == [.merged] })
    }

    @Test func mergeReturningNilDropsAndAThrowingMergeDeadLetters() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = try await setUp("offline-merge-nil")
        struct Refused: Error {}
        let queue = try queue(
            dir, namespace: namespace,
            policy: .merge { conflict in
                if conflict.mutation.id == "drop-me" { return nil }
                throw Refused()
            })
        let recorder = await EventRecorder(queue)
        try await queue.enqueue(
            .json(id: "drop-me", method: .put, path: "/entities/doc", body: Edit(value: "a", baseVersion: 1), kind: "doc"))
        try await queue.enqueue(
            .json(id: "throw", method: .put, path: "/entities/doc", body: Edit(value: "b", baseVersion: 1), kind: "doc"))
        let report = try await queue.flush()
        #expect(report.dropped == 1)
        #expect(report.deadLettered == 1)
        #expect(try await queue.deadLetters().map(\.mutation.id) == ["throw"])
        #expect(await recorder.wait { self.conflicts($0) == [.mergeDropped, .unresolved] })
        #expect(try await OfflineServer.entity("doc", namespace: namespace) == (2, .string("theirs")))
    }

    @Test func aConflictThatKeepsComingBackIsDeadLetteredAfterTheLimit() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = try await setUp("offline-unresolved")
        // Last write wins removes header preconditions, but this 409 comes from the body's
        // baseVersion: every resend conflicts again, and the limit (3) ends it.
        let queue = try queue(dir, namespace: namespace, policy: .lastWriteWins)
        let recorder = await EventRecorder(queue)
        try await queue.enqueue(
            .json(id: "stubborn", method: .put, path: "/entities/doc", body: Edit(value: "x", baseVersion: 1), kind: "doc"))
        let report = try await queue.flush()
        #expect(report.deadLettered == 1)
        #expect(try await queue.deadLetters().first?.statusCode == 409)
        #expect(
            await recorder.wait {
                self.conflicts($0) == [
                    .resentWithoutPreconditions, .resentWithoutPreconditions, .resentWithoutPreconditions, .unresolved,
                ]
            })
        #expect(try await OfflineServer.log(namespace: namespace).deliveries == 1 + 4)  // the seed PUT + 4 attempts
    }
}
