import Foundation
import Testing
import Courier
import CourierTesting
@testable import CourierOffline

/// How an edit of a pending id replaces it in the store: what it keeps of the row it replaces.
@Suite("Offline coalescing")
struct CoalescingTests {
    let origin = MutationOrigin(environment: "prod", account: nil)

    func mutation(_ body: String, group: String) -> Mutation {
        Mutation(id: "x", method: .post, path: "/mutations", body: Data(body.utf8), group: group)
    }

    @Test func anEditOfAPayloadThatMayHaveBeenSentKeepsItsGroup() throws {
        // v1 is claimed for a send (it may be in flight); the edit asks for another group. Were it
        // moved, the other group's drainer could send v2 while v1 is still in flight, and v1
        // could land last.
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try MutationStore(path: dir.path("q.sqlite"), now: Date())
        _ = try store.enqueue(mutation("v1", group: "g1"), origin: origin, now: Date())
        let claimed = try #require(try store.head(group: "g1", origin: origin).head)
        #expect(try store.claim(claimed))
        _ = try store.enqueue(mutation("v2", group: "g2"), origin: origin, now: Date())

        let row = try #require(try store.pending().readable.first)
        #expect(row.mutation.body == Data("v2".utf8))
        #expect(row.mutation.group == "g1")
        #expect(row.generation == claimed.generation + 1)
        #expect(try store.head(group: "g2", origin: origin).head == nil)
    }

    @Test func anEditOfAnUnsentPayloadMovesToItsNewGroup() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let store = try MutationStore(path: dir.path("q.sqlite"), now: Date())
        _ = try store.enqueue(mutation("v1", group: "g1"), origin: origin, now: Date())
        _ = try store.enqueue(mutation("v2", group: "g2"), origin: origin, now: Date())

        let row = try #require(try store.pending().readable.first)
        #expect(row.mutation.group == "g2")
        #expect(row.generation == 0, "nothing was sent: the key stays")
    }
}
