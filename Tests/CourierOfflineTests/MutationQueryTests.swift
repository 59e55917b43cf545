import Foundation
import Testing
import Courier
import CourierTesting
@testable import CourierOffline

/// A mutation's query: sent as `Request` sends one, stored with the mutation, and absent from
/// rows written before queries were stored (reference server, both transports).
@Suite("Offline mutations with a query (reference server)")
struct MutationQueryTests {
    func queue(_ path: String, _ client: APIClient) throws -> MutationQueue {
        var configuration = MutationQueue.Configuration()
        configuration.clock = TestClock(mode: .manual)
        configuration.sendsOnEnqueue = false
        return try MutationQueue(path: path, client: client, configuration: configuration)
    }

    /// The query survives reopening the file and arrives percent-encoded, in order.
    @Test(arguments: OfflineTransport.allCases)
    func aMutationsQueryIsStoredAndArrives(transport: OfflineTransport) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-query")
        let environment = try OfflineServer.environment(namespace: namespace)
        let query = [URLQueryItem(name: "draft", value: "a b+c"), URLQueryItem(name: "flag", value: nil)]
        do {
            let first = try queue(dir.path("q.sqlite"), makeClient(environment, transport: transport))
            try await first.enqueue(.json(id: "q-1", method: .post, path: "/mutations", query: query, body: ["v": 1]))
            await first.stop()
        }
        let reopened = try queue(dir.path("q.sqlite"), makeClient(environment, transport: transport))
        #expect(try await reopened.pending().map(\.mutation.query) == [query])
        let report = try await reopened.flush()
        #expect(report.sent == 1)
        #expect(report.deadLettered == 0)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map(\.query) == ["draft=a%20b%2Bc&flag"])
        #expect(log.applied.map(\.key) == ["q-1"])
        #expect(log.deliveries == 1)
    }

    /// A file written before queries were stored (schema 6) opens, its rows read as having no
    /// query, and its pending mutation is delivered, without a query.
    @Test(arguments: OfflineTransport.allCases)
    func rowsWrittenBeforeQueriesWereStoredStillDeliver(transport: OfflineTransport) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-query-old")
        let environment = try OfflineServer.environment(namespace: namespace)
        do {
            let db = try SQLiteDatabase(path: dir.path("q.sqlite"))
            for migration in QueueSchema.migrations.prefix(6) { try db.execute(migration) }
            try db.execute("PRAGMA user_version = 6")
            try db.execute(
                """
                INSERT INTO pending (id, grp, kind, method, path, headers, body, content_type, enqueued_at, environment, account)
                VALUES ('old-1', 'default', 'default', 'POST', '/mutations', X'5B5D', X'7B2276223A377D', 'application/json',
                  0, '\(environment.id)', NULL);
                INSERT INTO dead_letters (id, grp, kind, method, path, headers, body, content_type, status, reason,
                  response_body, attempts, enqueued_at, failed_at, environment, account)
                VALUES ('old-2', 'default', 'default', 'POST', '/mutations', X'5B5D', NULL, NULL, 422, 'HTTP 422', X'', 1,
                  0, 0, '\(environment.id)', NULL);
                """)
        }
        let queue = try queue(dir.path("q.sqlite"), makeClient(environment, transport: transport))
        #expect(try await queue.pending().map(\.mutation.query) == [[]])
        #expect(try await queue.deadLetters().map(\.mutation.query) == [[]])
        let report = try await queue.flush()
        #expect(report.sent == 1)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map(\.key) == ["old-1"])
        #expect(log.applied.map { $0.payload["v"]?.int } == [7])
        #expect(log.applied.map(\.query) == [""])
    }
}
