import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
@testable import CourierOffline

/// A delivered id's key is remembered so that a later change with the same id goes out under a
/// new key (the server remembers the old key with the old payload). The wall clock decides when a
/// key is old enough to forget, but a clock that jumps must not make the queue forget the keys it
/// spent last.
@Suite("Offline: spent keys and the wall clock")
struct SpentKeyRetentionTests {
    /// The device clock jumped 31 days ahead before the relaunch (set by hand), or was 40 days
    /// behind when the change was delivered and is right at the relaunch (a reset before the
    /// network time arrived). Either way the server still remembers key `a`.
    @Test(
        .timeLimit(.minutes(1)),
        arguments: [(delivered: 0.0, reopened: 31.0), (delivered: -40.0, reopened: 0.0)])
    func aClockJumpForgetsNoRecentKey(days: (delivered: Double, reopened: Double)) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("spent-clock")
        let environment = try OfflineServer.environment(namespace: namespace)
        let start = Date()
        func queue(at days: Double) throws -> MutationQueue {
            var configuration = MutationQueue.Configuration()
            configuration.sendsOnEnqueue = false
            configuration.now = { start.addingTimeInterval(days * 24 * 3600) }
            return try MutationQueue(path: dir.path("q.sqlite"), client: makeClient(environment), configuration: configuration)
        }
        do {
            let first = try queue(at: days.delivered)
            try await first.enqueue(try .json(id: "a", method: .post, path: "/mutations", body: ["v": 1]))
            #expect(try await first.flush().sent == 1)
        }
        let relaunched = try queue(at: days.reopened)
        try await relaunched.enqueue(try .json(id: "a", method: .post, path: "/mutations", body: ["v": 2]))
        let report = try await relaunched.flush()
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(report.sent == 1 && report.deadLettered == 0)
        #expect(log.mismatches == 0, "a new payload went out under the key the server remembers")
        #expect(log.applied.count == 2)
    }

    /// Keys older than the retention are still forgotten past the newest kept: the table does
    /// not grow without bound.
    @Test func keysPastTheRetentionAreForgottenBeyondTheNewestKept() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let path = dir.path("q.sqlite")
        let now = Date()
        let kept = MutationStore.spentKeysKept
        do {
            _ = try MutationStore(path: path, now: now)  // creates the tables
            let db = try SQLiteDatabase(path: path)
            let old = now.timeIntervalSince1970 - MutationStore.spentKeyRetention - 3600
            try db.transaction {
                for index in 0..<(kept + 10) {
                    // The 10 oldest first; all past the retention.
                    _ = try db.run(
                        "INSERT INTO spent_keys (id, generation, spent_at) VALUES (?, 0, ?)",
                        [.text("k\(index)"), .real(old + Double(index))])
                }
                _ = try db.run(
                    "INSERT INTO spent_keys (id, generation, spent_at) VALUES ('recent', 0, ?)",
                    [.real(now.timeIntervalSince1970 - 60)])
            }
        }
        _ = try MutationStore(path: path, now: now)
        let db = try SQLiteDatabase(path: path)
        #expect(try db.queryInt("SELECT COUNT(*) FROM spent_keys") == Int64(kept))
        #expect(try db.queryInt("SELECT COUNT(*) FROM spent_keys WHERE id = 'recent'") == 1)
        #expect(try db.queryInt("SELECT COUNT(*) FROM spent_keys WHERE id IN ('k0', 'k10')") == 0)
    }
}
