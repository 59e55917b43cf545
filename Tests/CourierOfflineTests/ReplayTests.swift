import Foundation
import Testing
import Courier
import CourierTesting
import CourierOffline

/// The queue against the real reference server (routes_mutations.py: dedupes by Idempotency-Key,
/// records the order it applied mutations in).
@Suite("Offline replay (reference server)")
struct ReplayTests {
    func queue(
        _ dir: TemporaryDirectory, _ client: APIClient, _ configure: (inout MutationQueue.Configuration) -> Void = { _ in }
    ) throws -> MutationQueue {
        var configuration = MutationQueue.Configuration()
        configuration.clock = TestClock(mode: .manual)  // backoff ends only when a test says so
        configure(&configuration)
        return try MutationQueue(path: dir.path("queue.sqlite"), client: client, configuration: configuration)
    }

    @Test func twoHundredMutationsQueuedWhileUnreachableArriveInOrderExactlyOnce() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-outage")
        let attempts = AttemptCounter()
        // The environment the mutations belong to, first at an address where nothing listens
        // (an outage), then back at the server: same environment name, so they are delivered.
        let environment = try OfflineServer.environment(namespace: namespace)
        let down = APIEnvironment(name: environment.id, baseURL: OfflineServer.unreachable.baseURL)
        let client = makeClient(down, extra: [attempts])
        let queue = try queue(dir, client)
        for i in 0..<200 {
            try await queue.enqueue(.json(id: "o-\(i)", method: .post, path: "/mutations", body: ["i": i]))
        }
        let offline = try await queue.flush()
        #expect(offline.sent == 0)
        #expect(offline.pending == 200)
        #expect(attempts.count >= 1 && attempts.count <= 2)  // the head only; the group then waits

        try await client.switchEnvironment(to: environment)
        let report = try await queue.flush()
        #expect(report.sent == 200)
        #expect(report.pending == 0)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map { $0.payload["i"]?.int } == (0..<200).map { Optional($0) })
        #expect(log.applied.map(\.key) == (0..<200).map { "o-\($0)" })
        #expect(log.deliveries == 200)
        #expect(log.byKey.count == 200 && log.byKey.values.allSatisfy { $0 == 1 })
    }

    /// An id reused for a later change after its first change was delivered, dropped or discarded
    /// goes out under a new key: the server remembers the old key with the old payload and would
    /// refuse the new one (422 idempotency_key_reused), dead-lettering a good change. Also across
    /// reopening the file, and after a discarded dead letter.
    @Test func aLaterChangeUnderADeliveredIDGoesOutUnderANewKey() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-id-reuse")
        let environment = try OfflineServer.environment(namespace: namespace)
        let first = try queue(dir, makeClient(environment)) { $0.sendsOnEnqueue = false }
        try await first.enqueue(.json(id: "item-42", method: .post, path: "/mutations", body: ["v": 1]))
        #expect(try await first.flush().sent == 1)
        try await first.enqueue(.json(id: "item-42", method: .post, path: "/mutations", body: ["v": 2]))
        #expect(try await first.pending().map(\.idempotencyKey) == ["item-42~1"])
        #expect(try await first.flush().sent == 1)
        // A refused change, its dead letter discarded: the next change of the id needs a new key too.
        try await first.enqueue(.json(id: "item-42", method: .post, path: "/mutations", body: ["invalid": true]))
        #expect(try await first.flush().deadLettered == 1)
        try await first.discardDeadLetter(id: "item-42")
        await first.stop()
        let reopened = try queue(dir, makeClient(environment)) { $0.sendsOnEnqueue = false }
        try await reopened.enqueue(.json(id: "item-42", method: .post, path: "/mutations", body: ["v": 3]))
        let report = try await reopened.flush()
        #expect(report.sent == 1)
        #expect(report.deadLettered == 0)
        #expect(try await reopened.deadLetters().isEmpty)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map(\.key) == ["item-42", "item-42~1", "item-42~3"])
        #expect(log.applied.map { $0.payload["v"]?.int } == [1, 2, 3])
        #expect(log.mismatches == 0)
    }

    @Test func unprocessableGoesToTheDeadLetterTableAndTheGroupMovesOn() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-422")
        let queue = try queue(dir, makeClient(try OfflineServer.environment(namespace: namespace))) { $0.sendsOnEnqueue = false }
        let recorder = await EventRecorder(queue)
        try await queue.enqueue(.json(id: "bad", method: .post, path: "/mutations", body: ["invalid": true]))
        try await queue.enqueue(.json(id: "good", method: .post, path: "/mutations", body: ["i": 1]))
        let report = try await queue.flush()
        #expect(report.deadLettered == 1)
        #expect(report.sent == 1)
        let letters = try await queue.deadLetters()
        #expect(letters.map(\.mutation.id) == ["bad"])
        #expect(letters.first?.statusCode == 422)
        #expect(letters.first.map { String(decoding: $0.responseBody, as: UTF8.self).contains("must not be empty") } == true)
        #expect(try await queue.pendingCount() == 0)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map(\.key) == ["good"])
        #expect(
            await recorder.wait { events in
                events.contains { if case .deadLettered = $0.outcome { $0.mutationID == "bad" } else { false } }
            })

        // Discarding empties the table; a retried letter goes back to the queue.
        try await queue.retryDeadLetter(id: "bad")
        #expect(try await queue.pending().map(\.mutation.id) == ["bad"])
        _ = try await queue.flush()
        try await queue.discardDeadLetter(id: "bad")
        #expect(try await queue.deadLetters().isEmpty)
        await #expect(throws: MutationQueueError.noSuchDeadLetter("bad")) { try await queue.discardDeadLetter(id: "bad") }
    }

    @Test func coalescingSendsOnlyTheNewestPayload() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-coalesce")
        let queue = try queue(dir, makeClient(try OfflineServer.environment(namespace: namespace))) { $0.sendsOnEnqueue = false }
        for value in 1...5 {
            try await queue.enqueue(.json(id: "title", method: .put, path: "/entities/doc", body: ["value": "v\(value)"]))
        }
        try await queue.enqueue(.json(id: "other", method: .post, path: "/mutations", body: ["i": 9]))
        #expect(try await queue.pendingCount() == 2)
        let report = try await queue.flush()
        #expect(report.sent == 2)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.deliveries == 2)
        #expect(log.applied.map(\.key) == ["title", "other"])
        #expect(try await OfflineServer.entity("doc", namespace: namespace).value?.string == "v5")
    }

    @Test func transientFailuresBackOffOnTheInjectedClockThenDeliver() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-503")
        let clock = TestClock(mode: .manual)
        let attempts = AttemptCounter()
        let queue = try queue(dir, makeClient(try OfflineServer.environment(namespace: namespace), extra: [attempts])) {
            $0.clock = clock
            $0.random = { 1 }
            $0.backoff = Backoff(initialDelay: .seconds(2), maximumDelay: .seconds(60), jitter: .equal)
        }
        let recorder = await EventRecorder(queue)
        try await OfflineServer.control("POST", "/_down", namespace: namespace, json: ["down": true])
        try await queue.enqueue(.json(id: "a", method: .post, path: "/mutations", body: ["i": 1]))
        try await clock.waitForSleepers(count: 1)
        #expect(attempts.count == 1)
        // 503 with Retry-After: 1 → the backoff (2 s here) is longer, so it wins.
        #expect(clock.sleeps == [.seconds(2)])
        #expect(
            await recorder.wait {
                $0.contains { if case .retrying(_, let delay) = $0.outcome { delay == .seconds(2) } else { false } }
            })

        clock.advance(by: .seconds(2))  // second attempt, still down: 4 s
        try await clock.waitForSleepers(count: 1)
        #expect(await recorder.wait { $0.filter { if case .retrying = $0.outcome { true } else { false } }.count == 2 })
        #expect(clock.sleeps == [.seconds(2), .seconds(4)])
        #expect(attempts.count == 2)

        try await OfflineServer.control("POST", "/_down", namespace: namespace, json: ["down": false])
        clock.advance(by: .seconds(4))
        #expect(await recorder.wait { $0.contains { if case .sent = $0.outcome { true } else { false } } })
        #expect(try await queue.pendingCount() == 0)
        #expect(attempts.count == 3)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map(\.key) == ["a"])
        #expect(log.refusedWhileDown == 2)
    }

    @Test func groupsAreIndependentAndOrderedWithinEachGroup() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-groups")
        let queue = try queue(dir, makeClient(try OfflineServer.environment(namespace: namespace))) { $0.sendsOnEnqueue = false }
        // Two groups interleaved at enqueue time; each keeps its own order.
        for i in 0..<10 {
            let group = i.isMultiple(of: 2) ? "even" : "odd"
            try await queue.enqueue(.json(id: "g-\(i)", method: .post, path: "/mutations", body: ["i": i], group: group))
        }
        let report = try await queue.flush()
        #expect(report.sent == 10)
        let keys = try await OfflineServer.log(namespace: namespace).applied.compactMap(\.key)
        #expect(keys.filter { ["g-0", "g-2", "g-4", "g-6", "g-8"].contains($0) } == ["g-0", "g-2", "g-4", "g-6", "g-8"])
        #expect(keys.filter { ["g-1", "g-3", "g-5", "g-7", "g-9"].contains($0) } == ["g-1", "g-3", "g-5", "g-7", "g-9"])
    }

    @Test func cancellingAFlushLeavesTheQueueUnchanged() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-cancel")
        // The server applies, then holds its answer until released: the flush is cancelled while
        // the request is out, however loaded the machine (a 5 s window was missed under load).
        try await OfflineServer.control("POST", "/_mutations_config", namespace: namespace, json: ["holdAfterApply": true])
        let queue = try queue(dir, makeClient(try OfflineServer.environment(namespace: namespace))) { $0.sendsOnEnqueue = false }
        try await queue.enqueue(.json(id: "slow", method: .post, path: "/mutations", body: ["i": 1]))
        try await queue.enqueue(.json(id: "next", method: .post, path: "/mutations", body: ["i": 2]))
        let flush = Task { try await queue.flush() }
        // Wait until the server has the request (applied, now holding its answer).
        let clock = ContinuousClock()
        let start = clock.now
        while try await OfflineServer.log(namespace: namespace).applied.count < 1, clock.now - start < .seconds(30) {
            try await Task.sleep(for: .milliseconds(10))
        }
        flush.cancel()
        _ = try? await flush.value  // cancelled: its outcome is the queue state checked below
        #expect(try await queue.pending().map(\.mutation.id) == ["slow", "next"])
        #expect(try await queue.deadLetters().isEmpty)
        // The replay of the cancelled request is answered from the server's idempotency record.
        try await OfflineServer.control("POST", "/_mutations_config", namespace: namespace, json: ["holdAfterApply": false])
        let report = try await queue.flush()
        #expect(report.sent == 2)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map(\.key) == ["slow", "next"])
        #expect(log.replays == 1)
    }
}

/// Flushes that share one drain: one caller's cancellation is not another's.
@Suite("Offline flushes joining a cancelled drain")
struct FlushCancellationTests {
    @Test func aFlushThatJoinedADrainAnotherCallerCancelledStillDelivers() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let (arrivals, arrived) = AsyncStream<Void>.makeStream()
        let (releases, release) = AsyncStream<Void>.makeStream()
        let count = Locked(0)
        let stub = StubTransport { _ in
            let number = count.withLock { value -> Int in
                value += 1
                return value
            }
            guard number == 1 else { return .status(201) }
            arrived.yield()
            await Task { for await _ in releases { break } }.value  // a transport slow to give up
            throw URLError(.cancelled)
        }
        let client = APIClient(environment: OfflineServer.unreachable) {
            $0.transport = stub
            $0.interceptors = .standard()
        }
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        let queue = try MutationQueue(path: dir.path("q.sqlite"), client: client, configuration: configuration)
        try await queue.enqueue(.json(id: "m1", method: .post, path: "/mutations", body: ["i": 1]))
        let first = Task { try await queue.flush() }
        for await _ in arrivals { break }
        first.cancel()
        let second = Task { try await queue.flush() }
        // Gives the second flush time to join the cancelled drain (were it later, it would start
        // a drain of its own and the test would pass either way).
        try await Task.sleep(for: .milliseconds(200))
        release.yield()
        _ = try? await first.value
        let report = try await second.value
        #expect(stub.requestCount == 2, "the second flush sent nothing")
        #expect(report.pending == 0)
        #expect(try await queue.pendingCount() == 0)
    }
}
