import Foundation
import Testing
import Courier
import CourierTesting
@testable import CourierOffline

/// Rows of the queue's file that cannot be read back (a damaged page, another program or a newer
/// build writing the file), against the reference server: the readable mutations are still listed
/// and delivered in order, once each; the unreadable ones are set aside, never sent, listed with
/// their typed error until the app discards them.
@Suite("Offline queue with unreadable rows (reference server)")
struct UnreadableRowTests {
    /// Writes each `damage` statement straight into the file, as another program would.
    static func damage(_ path: String, _ statements: [String]) throws {
        let db = try SQLiteDatabase(path: path)
        for statement in statements { try db.execute(statement) }
    }

    /// A queue over `transport` whose rows m0…m`count - 1` (one group, `POST /mutations`) were
    /// enqueued, then damaged by `statements`, in a file of `dir`; and the server namespace its
    /// deliveries go to.
    static func damagedQueue(
        _ name: String, rows count: Int, damage statements: [String], transport: OfflineTransport, in dir: TemporaryDirectory
    ) async throws -> (MutationQueue, String) {
        let namespace = OfflineServer.makeNamespace(name)
        let client = makeClient(try OfflineServer.environment(namespace: namespace), transport: transport)
        let path = dir.path("q.sqlite")
        do {
            let queue = try queue(path, client)
            for i in 0..<count { try await queue.enqueue(.json(id: "m\(i)", method: .post, path: "/mutations", body: ["i": i])) }
        }
        try damage(path, statements)
        return (try queue(path, client), namespace)
    }

    static func queue(_ path: String, _ client: APIClient) throws -> MutationQueue {
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        configuration.clock = TestClock(mode: .manual)
        return try MutationQueue(path: path, client: client, configuration: configuration)
    }

    /// m1's header list and m3's query items no longer decode: m0, m2 and m4 reach the server in
    /// that order, once each, and `pending()` keeps listing what can be read.
    @Test(arguments: OfflineTransport.allCases)
    func unreadableRowsAreSetAsideAndTheRowsBehindThemAreDeliveredInOrder(transport: OfflineTransport) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let (queue, namespace) = try await Self.damagedQueue(
            "offline-unreadable", rows: 5,
            damage: [
                "UPDATE pending SET headers = X'00FF' WHERE id = 'm1'",
                "UPDATE pending SET query = CAST('not json' AS BLOB) WHERE id = 'm3'",
            ], transport: transport, in: dir)
        #expect(try await queue.pending().map(\.mutation.id) == ["m0", "m2", "m4"])

        let report = try await queue.flush()
        #expect(report.sent == 3)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map(\.key) == ["m0", "m2", "m4"])
        #expect(log.applied.map { $0.payload["i"]?.int } == [0, 2, 4])
        #expect(log.deliveries == 3)
        #expect(log.byKey.values.allSatisfy { $0 == 1 })
        #expect(await queue.storageFailure == nil)

        // Nothing lost: both rows are still stored, and a second flush sends nothing again.
        #expect(try await queue.pendingCount() == 2)
        #expect(try await queue.pending().isEmpty)
        #expect(try await queue.flush().sent == 0)
        #expect(try await OfflineServer.log(namespace: namespace).deliveries == 3)

        // Set aside with their typed errors, for the app to read and remove; a later change of the
        // group still goes out.
        let unreadable = try await queue.unreadableMutations()
        #expect(unreadable.map(\.id) == ["m1", "m3"])
        #expect(unreadable.map(\.group) == ["default", "default"])
        for row in unreadable {
            guard case .unreadableMutation(let id, _) = row.error else {
                Issue.record("expected unreadableMutation, got \(row.error)")
                continue
            }
            #expect(id == row.id)
        }
        try await queue.enqueue(.json(id: "m5", method: .post, path: "/mutations", body: ["i": 5]))
        #expect(try await queue.flush().sent == 1)
        for id in ["m1", "m3"] { #expect(try await queue.discardPending(id: id)) }
        #expect(try await queue.pendingCount() == 0)
        let last = try await OfflineServer.log(namespace: namespace)
        #expect(last.applied.map(\.key) == ["m0", "m2", "m4", "m5"])
        #expect(last.deliveries == 4)
    }

    /// A dead letter that cannot be read back is listed apart from the others: the app's "retry
    /// every dead letter" still reaches the server with the readable ones, and the unreadable one
    /// is listed with its typed error until the app discards it.
    @Test(arguments: OfflineTransport.allCases)
    func anUnreadableDeadLetterIsListedApartAndTheOthersAreStillRetried(transport: OfflineTransport) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-unreadable-letter")
        let environment = try OfflineServer.environment(namespace: namespace)
        // The environment at a path the server has no route for (404): both changes are refused.
        let wrong = APIEnvironment(name: environment.id, baseURL: try OfflineServer.apiURL().appendingPathComponent("no-route"))
        let client = makeClient(wrong, transport: transport)
        let path = dir.path("q.sqlite")
        let queue = try Self.queue(path, client)
        for (id, group) in [("bad", "a"), ("good", "b")] {
            try await queue.enqueue(.json(id: id, method: .post, path: "/mutations", body: ["id": id], group: group))
        }
        #expect(try await queue.flush().deadLettered == 2)
        try Self.damage(path, ["UPDATE dead_letters SET headers = X'00FF' WHERE id = 'bad'"])

        try await client.switchEnvironment(to: environment)
        let letters = try await queue.deadLetters()
        #expect(letters.map(\.mutation.id) == ["good"])
        for letter in letters { try await queue.retryDeadLetter(id: letter.mutation.id) }
        #expect(try await queue.flush().sent == 1)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map(\.key) == ["good"])
        #expect(log.deliveries == 1)

        let unreadable = try await queue.unreadableDeadLetters()
        #expect(unreadable.map(\.id) == ["bad"])
        #expect(unreadable.map(\.group) == ["a"])
        guard case .unreadableMutation(let id, _) = unreadable.first?.error else {
            Issue.record("expected unreadableMutation, got \(String(describing: unreadable.first?.error))")
            return
        }
        #expect(id == "bad")
        try await queue.discardDeadLetter(id: "bad")
        #expect(try await queue.unreadableDeadLetters().isEmpty)
        #expect(try await queue.deadLetters().isEmpty)
    }

    /// `queue.flush()`, cancelled after 10 s (a safety net: a flush that spins never returns).
    static func boundedFlush(_ queue: MutationQueue) async -> Result<FlushReport, any Error> {
        let flush = Task { try await queue.flush() }
        let watchdog = Task {
            try await Task.sleep(for: .seconds(10))
            flush.cancel()
        }
        defer { watchdog.cancel() }
        return await flush.result
    }

    /// Rows another program wrote with other column types than this build writes: an id stored as
    /// bytes (a BLOB, as a driver binding the id as data writes it) is delivered like any row, and
    /// a revision that is no integer is set aside. The queue spun on either (its claim of the row
    /// matched nothing, so it read the row again, forever, without yielding the queue's thread).
    @Test(arguments: OfflineTransport.allCases)
    func rowsWithForeignColumnTypesDoNotStopTheQueue(transport: OfflineTransport) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let (queue, namespace) = try await Self.damagedQueue(
            "offline-foreign-types", rows: 4,
            damage: [
                "UPDATE pending SET id = CAST(id AS BLOB) WHERE id = 'm1'",
                "UPDATE pending SET revision = 0.5 WHERE id = 'm2'",
            ], transport: transport, in: dir)
        let report = try await Self.boundedFlush(queue).get()
        #expect(report.sent == 3)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map(\.key) == ["m0", "m1", "m3"])
        #expect(log.deliveries == 3)
        #expect(try await queue.unreadableMutations().map(\.id) == ["m2"])
        #expect(try await queue.discardPending(id: "m2"))
        #expect(try await queue.pendingCount() == 0)
    }

    /// A new change under the id of a row that cannot be read back replaces it, as enqueueing an
    /// id that is pending does (coalescing): the app's next edit of the same item is stored and
    /// delivered in the row's place, instead of failing until the app discards the row.
    @Test(arguments: OfflineTransport.allCases)
    func aNewChangeUnderTheIDOfAnUnreadableRowReplacesIt(transport: OfflineTransport) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let (queue, namespace) = try await Self.damagedQueue(
            "offline-unreadable-replace", rows: 3,
            damage: ["UPDATE pending SET headers = X'00FF', revision = 0.5 WHERE id = 'm1'"], transport: transport, in: dir)
        let recorder = await EventRecorder(queue)
        try await queue.enqueue(.json(id: "m1", method: .post, path: "/mutations", body: ["i": 11]))
        let replaced = await recorder.wait { events in
            events.contains { if case .enqueued(replaced: true) = $0.outcome { $0.mutationID == "m1" } else { false } }
        }
        #expect(replaced)
        #expect(try await queue.unreadableMutations().isEmpty)
        #expect(try await queue.pending().map(\.mutation.id) == ["m0", "m1", "m2"])
        #expect(try await queue.flush().sent == 3)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map(\.key) == ["m0", "m1", "m2"])
        #expect(log.applied.map { $0.payload["i"]?.int } == [0, 11, 2])
        #expect(log.deliveries == 3)
    }
}
