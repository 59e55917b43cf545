import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
@testable import CourierOffline

/// One change reaches the server under one key: an identical re-enqueue after an attempt that may
/// have been applied stays a replay, and a 409 "still processing" answer to a key an unanswered
/// attempt carried is retried under that key, not resolved as a conflict.
@Suite("Offline: one change, one key")
struct KeyReuseTests {
    static func mutation(_ id: String, _ v: Int, group: String = "default") throws -> Mutation {
        try .json(id: id, method: .post, path: "/mutations", body: ["v": v], group: group)
    }

    /// A queue whose mutations go to `server` under `policy`, resolving conflicts by last write
    /// wins, sent only by `flush()`; the client's retries have no budget or breaker.
    static func lastWriteWinsQueue(
        _ dir: TemporaryDirectory, over server: StubTransport, policy: EndpointPolicy
    ) throws -> MutationQueue {
        let client = APIClient(environment: OfflineServer.unreachable) {
            $0.transport = server
            $0.interceptors = .standard(retry: RetryInterceptor(budget: nil, circuitBreaker: nil))
        }
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        configuration.defaultKind = .init(policy: policy, conflictPolicy: .lastWriteWins)
        return try MutationQueue(path: dir.path("q.sqlite"), client: client, configuration: configuration)
    }

    /// The change went to the server under one key only, and waits in the queue for the answer.
    static func expectAppliedOnceAndStillPending(_ applied: [String], queue: MutationQueue) async throws {
        #expect(applied.count == 1, "the one change was applied \(applied.count)x, under keys \(applied)")
        #expect(try await queue.pendingCount() == 1)
    }

    /// The first attempt of k reached the server (applied) but timed out on the client. The app
    /// re-enqueues the very same request (same id, method, path, headers, body) under another
    /// group (e.g. after an update that groups by entity). Nothing about the request changed, the
    /// row keeps its group anyway — but the key is bumped to k~1, so the server applies it twice.
    @Test(.timeLimit(.minutes(1))) func reEnqueueingTheIdenticalRequestUnderAnotherGroupIsNotAppliedTwice() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("rev-samereq")
        try await OfflineServer.control("POST", "/_mutations_config", namespace: namespace, json: ["delayAfterApply": 2.0])
        let environment = try OfflineServer.environment(namespace: namespace)
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        // Backoff on a manual clock: no wake-up retries the first attempt in the background (on a
        // loaded machine one delivered it before the re-enqueue, which then was a new change).
        configuration.clock = TestClock(mode: .manual)
        configuration.defaultKind = .init(
            policy: MutationQueue.Configuration.defaultEndpointPolicy.with(\.deadline, .milliseconds(500)))
        let queue = try MutationQueue(path: dir.path("q.sqlite"), client: makeClient(environment), configuration: configuration)
        try await queue.enqueue(try Self.mutation("k", 1, group: "default"))
        let first = try await queue.flush()
        #expect(first.transientFailures == 1)  // timed out; the server applies it
        // On a loaded machine the 500 ms deadline can end before the server even applied the
        // first attempt; the second would then meet a key still in progress (409) and send
        // nothing. Wait (bounded) until the server has applied it, as the scenario says.
        let clock = ContinuousClock()
        let start = clock.now
        while try await OfflineServer.log(namespace: namespace).applied.isEmpty, clock.now - start < .seconds(20) {
            try await Task.sleep(for: .milliseconds(20))
        }
        try await OfflineServer.control("POST", "/_mutations_config", namespace: namespace, json: ["delayAfterApply": 0])
        try await queue.enqueue(try Self.mutation("k", 1, group: "note-42"))  // the identical request
        // Under the parallel suite's load the replay itself can run past the 500 ms deadline (a
        // CI run saw `sent 0`): flush again, as the app would, until it went through. Every
        // flush sends the same key, so the server's count below stays the proof.
        var sent = 0
        for _ in 0..<10 where sent == 0 { sent += try await queue.flush().sent }
        #expect(sent == 1)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.count == 1, "applied \(log.applied.count)x under keys \(log.applied.compactMap(\.key))")
    }

    /// draft-ietf-httpapi-idempotency-key-header (the draft `Mutation` cites), "Error Scenarios":
    /// a request retried while the first one with its key is still being processed gets 409.
    /// The queue's first attempt timed out while the server was still working on it; the next
    /// flush's attempt (same key) gets that 409, which the queue treats as a data conflict:
    /// last-write-wins rewrites it under a new key and sends it again — applied twice.
    @Test(.timeLimit(.minutes(1))) func aKeyInProgress409DoesNotMakeLastWriteWinsApplyTheChangeTwice() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        struct ServerState: Sendable {
            var applied: [String] = []
            var busyUntil: [String: Date] = [:]
        }
        let server = Locked(ServerState())
        let stub = StubTransport { request in
            let key = request.value(forHTTPHeaderField: "Idempotency-Key") ?? ""
            let answer: HTTPResponse? = server.withLock { state in
                if let until = state.busyUntil[key] {
                    return Date() < until
                        ? .json(#"{"title":"A request with this Idempotency-Key is being processed"}"#, status: 409)
                        : .json(#"{"ok":true}"#, status: 201)  // replay of the first answer
                }
                state.applied.append(key)
                state.busyUntil[key] = Date().addingTimeInterval(3)
                return nil
            }
            if let answer { return answer }
            try await Task.sleep(for: .seconds(3))  // slow processing; the client gives up first
            return .json(#"{"ok":true}"#, status: 201)
        }
        let queue = try Self.lastWriteWinsQueue(
            dir, over: stub, policy: MutationQueue.Configuration.defaultEndpointPolicy.with(\.deadline, .milliseconds(300)))
        try await queue.enqueue(try Self.mutation("k", 1))
        let first = try await queue.flush()
        #expect(first.transientFailures == 1)  // timed out while the server processes it
        _ = try await queue.flush()  // the retry, same key, while the first is still in progress
        let applied = server.withLock { $0.applied }
        #expect(applied.count == 1, "the one change was applied \(applied.count)x, under keys \(applied)")
    }

    /// The first attempt reached the server (applied, still processing) but its flush was
    /// cancelled (the app went to the background; a crash is the same): no failure was recorded,
    /// only that the row may have been sent. The next attempt under the same key gets 409 "still
    /// processing", which must not be resolved as a data conflict either.
    @Test(.timeLimit(.minutes(1))) func aKeyInProgress409AfterACancelledAttemptIsNotAConflict() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        struct ServerState: Sendable {
            var applied: [String] = []
            var busy: Set<String> = []
        }
        let server = Locked(ServerState())
        let (arrived, arrival) = AsyncStream.makeStream(of: Void.self)
        let (processing, processed) = AsyncStream.makeStream(of: Void.self)  // ends when the test does
        defer { processed.finish() }
        let stub = StubTransport { request in
            let key = request.value(forHTTPHeaderField: "Idempotency-Key") ?? ""
            let busy = server.withLock { state in
                if state.busy.contains(key) { return true }
                state.applied.append(key)
                state.busy.insert(key)
                return false
            }
            if busy { return .json(#"{"title":"A request with this Idempotency-Key is being processed"}"#, status: 409) }
            arrival.yield()
            for await _ in processing {}  // still processing when the flush is cancelled
            try Task.checkCancellation()
            return .json(#"{"ok":true}"#, status: 201)
        }
        let queue = try Self.lastWriteWinsQueue(dir, over: stub, policy: MutationQueue.Configuration.defaultEndpointPolicy)
        try await queue.enqueue(try Self.mutation("k", 1))
        let flushing = Task { try await queue.flush() }
        for await _ in arrived { break }
        flushing.cancel()
        _ = try? await flushing.value
        let second = try await queue.flush()  // same key, while the first is still in progress
        #expect(second.transientFailures == 1)
        try await Self.expectAppliedOnceAndStillPending(server.withLock { $0.applied }, queue: queue)
    }

    /// The first attempt reached the server (applied, still processing) and the client saw a
    /// timeout; eight more attempts under the key timed out on the way (they never reached the
    /// server). The next one gets 409 "still processing": the failures before it were not 409s,
    /// so it is the first such answer, not the ninth — retried under the same key, not resolved
    /// as a data conflict (last-write-wins would send the change again under a new key).
    @Test(.timeLimit(.minutes(1))) func aKeyInProgress409AfterManyOtherFailuresIsNotAConflict() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        struct ServerState: Sendable {
            var applied: [String] = []
            var busy: Set<String> = []
            var reachable = false
        }
        let server = Locked(ServerState())
        let stub = StubTransport { request in
            let key = request.value(forHTTPHeaderField: "Idempotency-Key") ?? ""
            let outcome: Int = server.withLock { state in
                if state.busy.contains(key) { return state.reachable ? 409 : 0 }
                state.applied.append(key)
                state.busy.insert(key)
                return 0
            }
            if outcome == 409 {
                return .json(#"{"title":"A request with this Idempotency-Key is being processed"}"#, status: 409)
            }
            throw URLError(.timedOut)
        }
        let queue = try Self.lastWriteWinsQueue(
            dir, over: stub, policy: MutationQueue.Configuration.defaultEndpointPolicy.with(\.retry, .none))
        try await queue.enqueue(try Self.mutation("k", 1))
        for _ in 0..<(1 + MutationQueue.keyInProgressAttempts) {
            #expect(try await queue.flush().transientFailures == 1)
        }
        server.withLock { $0.reachable = true }
        let answered = try await queue.flush()  // same key, while the first is still in progress
        #expect(answered.transientFailures == 1)
        try await Self.expectAppliedOnceAndStillPending(server.withLock { $0.applied }, queue: queue)
    }

    /// A server that answers 409 to every attempt under the key is not waited for without end:
    /// after ``MutationQueue/keyInProgressAttempts`` such answers the next is a data conflict,
    /// which last-write-wins resolves under a new key.
    @Test(.timeLimit(.minutes(1))) func endless409AnswersToTheKeyEndInAConflictAfterTheBound() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let keys = Locked<[String]>([])
        let stub = StubTransport { request in
            let key = request.value(forHTTPHeaderField: "Idempotency-Key") ?? ""
            let first = keys.withLock { seen in
                defer { seen.append(key) }
                return !seen.contains(key)
            }
            if first, keys.current.count == 1 { throw URLError(.timedOut) }  // reached it; no answer
            if first { return .json(#"{"ok":true}"#, status: 201) }
            return .json(#"{"title":"A request with this Idempotency-Key is being processed"}"#, status: 409)
        }
        let queue = try Self.lastWriteWinsQueue(
            dir, over: stub, policy: MutationQueue.Configuration.defaultEndpointPolicy.with(\.retry, .none))
        try await queue.enqueue(try Self.mutation("k", 1))
        for _ in 0...MutationQueue.keyInProgressAttempts {
            #expect(try await queue.flush().transientFailures == 1)
        }
        _ = try await queue.flush()  // the ninth 409: a conflict, resent under a new key
        let sent = keys.current
        #expect(sent.count == 2 + MutationQueue.keyInProgressAttempts + 1, "keys sent: \(sent)")
        #expect(Set(sent).count == 2)
        #expect(try await queue.pendingCount() == 0)
    }
}
