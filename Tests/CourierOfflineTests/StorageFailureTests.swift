import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
@testable import CourierOffline

/// A queue whose bookkeeping cannot be written (a read-only database, standing for a full disk or
/// a locked device too; and another connection holding the write lock) stops delivering:
/// a delivered mutation whose removal failed is never sent again, `flush()` returns, and the
/// queue delivers again once the write succeeds.
@Suite("Offline queue when storage cannot be written")
struct StorageFailureTests {
    /// The queue the stub transport reaches while answering (set once the queue exists).
    actor QueueReference {
        var queue: MutationQueue?
        func set(_ queue: MutationQueue) { self.queue = queue }
        func refuseWrites() async throws { try await queue?.refuseStorageWrites(true) }
    }

    /// A queue on a fresh file in `dir` that sends through `stub` and only on flush.
    static func queue(
        _ dir: TemporaryDirectory, _ stub: StubTransport, _ configure: (inout MutationQueue.Configuration) -> Void = { _ in }
    ) throws -> MutationQueue {
        let client = APIClient(environment: OfflineServer.unreachable) {
            $0.transport = stub
            $0.interceptors = .standard()
        }
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        configure(&configuration)
        return try MutationQueue(path: dir.path("q.sqlite"), client: client, configuration: configuration)
    }

    static func storageCode(of flush: () async throws -> FlushReport) async -> Int32? {
        do {
            _ = try await flush()
            return nil
        } catch MutationQueueError.storage(let error) {
            return error.code
        } catch {
            Issue.record("expected MutationQueueError.storage, got \(error)")
            return nil
        }
    }

    static func outcomes(_ events: AsyncStream<MutationEvent>, count: Int) async -> [String] {
        var outcomes: [String] = []
        for await event in events {
            switch event.outcome {
            case .sent: outcomes.append("sent \(event.mutationID)")
            case .storageUnavailable: outcomes.append("storage unavailable \(event.mutationID)")
            default: outcomes.append("other \(event.mutationID)")
            }
            if outcomes.count == count { break }
        }
        return outcomes
    }

    /// A dead letter that cannot be read back fails only calls about it: another letter is still
    /// retried (it was refused with the unreadable letter's error), and the unreadable one can be
    /// discarded.
    @Test func anUnreadableDeadLetterDoesNotBlockRetryingAnother() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let stub = StubTransport { _ in .status(422) }
        do {
            let queue = try Self.queue(dir, stub)
            for (id, group) in [("bad", "a"), ("good", "b")] {
                try await queue.enqueue(Mutation(id: id, method: .post, path: "/mutations", body: Data("{}".utf8), group: group))
            }
            #expect(try await queue.flush().deadLettered == 2)
        }
        do {
            let db = try SQLiteDatabase(path: dir.path("q.sqlite"))
            try db.execute("UPDATE dead_letters SET headers = X'00FF' WHERE id = 'bad'")
        }
        let queue = try Self.queue(dir, stub)
        try await queue.retryDeadLetter(id: "good")
        #expect(try await queue.pending().map(\.mutation.id) == ["good"])
        await #expect(throws: MutationQueueError.self) { try await queue.retryDeadLetter(id: "bad") }
        try await queue.discardDeadLetter(id: "bad")
        #expect(try await queue.deadLetters().isEmpty)
    }

    /// One row that cannot be read back is set aside — never sent, still stored — and the rest
    /// goes on, its own group too: the queue reports the row once, lists it, and removes it when
    /// the app discards it.
    @Test func anUnreadableRowIsSetAsideAndItsGroupGoesOn() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let stub = StubTransport { _ in .status(201) }
        do {
            let queue = try Self.queue(dir, stub)
            for (id, group) in [("a1", "a"), ("b1", "b"), ("a2", "a"), ("b2", "b")] {
                try await queue.enqueue(
                    Mutation(id: id, method: .post, path: "/mutations", body: Data("{}".utf8), group: group))
            }
        }
        do {
            let db = try SQLiteDatabase(path: dir.path("q.sqlite"))
            try db.execute("UPDATE pending SET headers = X'00FF' WHERE id = 'a1'")
        }
        let queue = try Self.queue(dir, stub)
        let recorder = await EventRecorder(queue)

        let first = try await queue.flush()
        #expect(first.sent == 3)
        let keys = stub.requests.compactMap { $0.value(forHTTPHeaderField: "Idempotency-Key") }
        #expect(Set(keys) == ["b1", "b2", "a2"] && keys.count == 3)
        #expect(keys.filter { $0.hasPrefix("b") } == ["b1", "b2"])
        #expect(await queue.storageFailure == nil, "one unreadable row is not a storage failure of the queue")
        _ = try await queue.flush()  // reported once, not on every flush; never sent
        #expect(stub.requestCount == 3)
        #expect(try await queue.unreadableMutations().map(\.id) == ["a1"])
        #expect(try await queue.unreadableMutations().map(\.group) == ["a"])
        #expect(try await queue.pendingCount() == 1)

        #expect(try await queue.discardPending(id: "a1"))
        #expect(try await queue.discardPending(id: "a1") == false)
        #expect(try await queue.unreadableMutations().isEmpty)
        #expect(try await queue.pendingCount() == 0)

        #expect(await recorder.wait { $0.count >= 5 })
        let outcomes = recorder.events.map { event in
            switch event.outcome {
            case .sent: "sent \(event.mutationID)"
            case .storageUnavailable(.unreadableMutation(let id, _)): "unreadable \(id ?? "?") in \(event.group)"
            case .discarded: "discarded \(event.mutationID) in \(event.group)"
            default: "other \(event.mutationID)"
            }
        }
        #expect(outcomes.count == 5)
        // Groups are delivered side by side: group a's report and send fall anywhere among b's sends.
        #expect(Set(outcomes.prefix(4)) == ["unreadable a1 in a", "sent a2", "sent b1", "sent b2"])
        #expect(outcomes.filter { $0.hasSuffix("a1 in a") || $0 == "sent a2" }.prefix(2) == ["unreadable a1 in a", "sent a2"])
        #expect(outcomes.last == "discarded a1 in a")
    }

    @Test func aDeliveryThatCannotBeRecordedIsNeverSentAgain() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let reference = QueueReference()
        // The database turns read-only while the server answers m1: the queue sent it, but
        // cannot record the delivery.
        let stub = StubTransport { request in
            if request.value(forHTTPHeaderField: "Idempotency-Key") == "m1" { try await reference.refuseWrites() }
            return .status(201)
        }
        let queue = try Self.queue(dir, stub)
        await reference.set(queue)
        try await queue.enqueue(Mutation(id: "m1", method: .post, path: "/mutations", body: Data("{}".utf8)))
        try await queue.enqueue(Mutation(id: "m2", method: .post, path: "/mutations", body: Data("{}".utf8)))
        let events = await queue.events()

        #expect(await Self.storageCode { try await queue.flush() } == 8)  // SQLITE_READONLY
        #expect(stub.requestCount == 1, "only m1 went out; nothing after the failed removal")
        #expect(await queue.storageFailure != nil)

        // Flushing again while storage still fails sends nothing.
        #expect(await Self.storageCode { try await queue.flush() } == 8)
        #expect(stub.requestCount == 1)

        // Storage works again: the removal is written first, then m2 goes out; m1 never again.
        try await queue.refuseStorageWrites(false)
        let recovered = try await queue.flush()
        #expect(await queue.storageFailure == nil)
        #expect(stub.requests.count == 2)
        #expect(recovered.pending == 0)
        #expect(await Self.outcomes(events, count: 3) == ["storage unavailable m1", "sent m1", "sent m2"])
    }

    @Test func storageThatCannotBeWrittenBeforeASendStopsItGoingOut() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let stub = StubTransport { _ in .status(201) }
        let queue = try Self.queue(dir, stub)
        try await queue.enqueue(Mutation(id: "m1", method: .post, path: "/mutations", body: Data("{}".utf8)))
        try await queue.enqueue(Mutation(id: "m2", method: .post, path: "/mutations", body: Data("{}".utf8)))
        let events = await queue.events()

        // Read-only before the flush: the attempt cannot be recorded, so nothing is sent.
        try await queue.refuseStorageWrites(true)
        #expect(await Self.storageCode { try await queue.flush() } == 8)
        #expect(stub.requestCount == 0)
        #expect(try await queue.pendingCount() == 2)

        try await queue.refuseStorageWrites(false)
        let recovered = try await queue.flush()
        #expect(recovered.sent == 2)
        #expect(stub.requestCount == 2)
        #expect(await Self.outcomes(events, count: 3) == ["storage unavailable m1", "sent m1", "sent m2"])
    }

    /// Without any trigger from the app, the queue tries storage again on its backoff schedule
    /// (here 1 s on a test clock) and delivers once writes work.
    @Test(.timeLimit(.minutes(1))) func deliveryResumesByItselfOnceStorageWorksAgain() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let stub = StubTransport { _ in .status(201) }
        let clock = TestClock(mode: .manual)
        let queue = try Self.queue(dir, stub) {
            $0.clock = clock
            $0.random = { 1 }  // the backoff's first wait is exactly its 1 s base
        }
        try await queue.enqueue(Mutation(id: "m1", method: .post, path: "/mutations", body: Data("{}".utf8)))
        let events = await queue.events()
        try await queue.refuseStorageWrites(true)
        let retryAt = clock.now.advanced(by: .seconds(1))
        #expect(await Self.storageCode { try await queue.flush() } == 8)
        try await clock.waitForSleeper(until: retryAt)
        #expect(stub.requestCount == 0)

        try await queue.refuseStorageWrites(false)
        clock.advance(by: .seconds(1))
        #expect(await Self.outcomes(events, count: 2) == ["storage unavailable m1", "sent m1"])
        #expect(stub.requestCount == 1)
        #expect(await queue.storageFailure == nil)
    }

    /// A full disk (the database capped at its size): an enqueue that needs space fails with a
    /// typed `SQLITE_FULL` and stores nothing; what was stored before is still delivered.
    @Test func aFullDiskFailsTheEnqueueWithATypedErrorAndKeepsWhatWasStored() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let stub = StubTransport { _ in .status(201) }
        let queue = try Self.queue(dir, stub)
        try await queue.enqueue(Mutation(id: "small", method: .post, path: "/mutations", body: Data("{}".utf8)))
        try await queue.capStorageAtCurrentSize()
        let large = Data(repeating: 0x61, count: 256 * 1024)
        do {
            try await queue.enqueue(Mutation(id: "large", method: .post, path: "/mutations", body: large))
            Issue.record("an enqueue beyond the disk's space succeeded")
        } catch MutationQueueError.storage(let error) {
            #expect(error.code == 13)  // SQLITE_FULL
        }
        #expect(try await queue.pending().map(\.mutation.id) == ["small"])
        let report = try await queue.flush()
        #expect(report.sent == 1 && report.pending == 0)
        #expect(stub.requestCount == 1)
    }

    /// Another connection (a share extension in a long transaction) holds the write lock while the
    /// app opens the queue: `init` gives up after about SQLite's 5 s busy timeout with a typed
    /// error. It counted only its own short sleeps between 5 s busy waits: minutes at launch.
    @Test(.timeLimit(.minutes(2))) func openingWhileAnotherConnectionHoldsTheWriteLockFailsWithinTheBusyTimeout() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.path("q.sqlite")
        do { _ = try MutationQueue(path: path, client: makeClient(OfflineServer.unreachable)) }
        let holder = try SQLiteDatabase(path: path)
        try holder.execute("BEGIN IMMEDIATE")
        let outcome = Locked<String?>(nil)
        Thread {
            let result: String
            do {
                _ = try MutationQueue(path: path, client: makeClient(OfflineServer.unreachable))
                result = "opened"
            } catch {
                result = "\(error)"
            }
            outcome.withLock { $0 = result }
        }.start()
        // Held for up to 30 s (six busy timeouts): the open must end while the lock is still held.
        let clock = ContinuousClock()
        let start = clock.now
        while outcome.current == nil, clock.now - start < .seconds(30) { try await Task.sleep(for: .milliseconds(50)) }
        let whileHeld = outcome.current
        try holder.execute("ROLLBACK")
        while outcome.current == nil { try await Task.sleep(for: .milliseconds(50)) }
        #expect(whileHeld != nil, "MutationQueue.init still blocked after 30 s")
        #expect(whileHeld?.contains("SQLite error 5") == true, "\(whileHeld ?? "nothing")")
    }

    /// `MutationQueue.open` waits out another connection's write lock off the cooperative pool
    /// and ends with the same typed error as `init`; once the lock is gone it opens a queue that
    /// stores. (That the wait blocks no pool thread is checked on a one-thread pool by
    /// `courier-pool-probe`'s offline-queue phase.)
    @Test(.timeLimit(.minutes(2))) func openWaitsOutAHeldWriteLockOffThePoolAndThenOpens() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.path("q.sqlite")
        do { _ = try await MutationQueue.open(path: path, client: makeClient(OfflineServer.unreachable)) }
        let holder = try SQLiteDatabase(path: path)
        try holder.execute("BEGIN IMMEDIATE")
        let error = await #expect(throws: MutationQueueError.self) {
            _ = try await MutationQueue.open(path: path, client: makeClient(OfflineServer.unreachable))
        }
        guard case .storage(let sqlite)? = error else {
            Issue.record("expected a storage error, got \(String(describing: error))")
            return
        }
        #expect(sqlite.code == 5, "SQLITE_BUSY: \(sqlite)")
        try holder.execute("ROLLBACK")
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        let queue = try await MutationQueue.open(
            path: path, client: makeClient(OfflineServer.unreachable), configuration: configuration)
        try await queue.enqueue(try .json(id: "a", method: .post, path: "/mutations", body: ["v": 1]))
        #expect(try await queue.pendingCount() == 1)
    }

    /// The store file is deleted while the queue has it open (an app's "reset data", a purged
    /// folder): SQLite in WAL mode goes on committing into the unlinked file, so an enqueue there
    /// must fail with a typed error, never report a change stored that no launch will find.
    @Test(.timeLimit(.minutes(1))) func anEnqueueAfterTheStoreFileWasDeletedFailsInsteadOfVanishing() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.path("q.sqlite")
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        let queue = try MutationQueue(path: path, client: makeClient(OfflineServer.unreachable), configuration: configuration)
        try await queue.enqueue(try .json(id: "a", method: .post, path: "/mutations", body: ["v": 1]))
        for suffix in ["", "-wal", "-shm"] { try FileManager.default.removeItem(atPath: path + suffix) }
        let error = await #expect(throws: MutationQueueError.self) {
            try await queue.enqueue(try .json(id: "b", method: .post, path: "/mutations", body: ["v": 1]))
        }
        guard case .storage(let sqlite)? = error else {
            Issue.record("expected .storage, got \(String(describing: error))")
            return
        }
        #expect(sqlite.code == 1032)  // SQLITE_READONLY_DBMOVED
    }
}
