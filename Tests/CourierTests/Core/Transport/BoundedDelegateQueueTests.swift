import Foundation
import Testing

@testable import Courier

@Suite("BoundedDelegateQueue: the hand-over waits while the delegate is behind")
struct BoundedDelegateQueueTests {
    /// Waits (at most 5 s) until `condition` holds.
    private static func waitUntil(_ condition: () -> Bool) async throws {
        for _ in 0..<500 where !condition() { try await Task.sleep(for: .milliseconds(10)) }
        #expect(condition())
    }

    @Test("adding waits at maxPending operations until one finishes, and operations run in order")
    func waitsAtTheBound() async throws {
        let queue = BoundedDelegateQueue(maxPending: 2)
        let gate = DispatchSemaphore(value: 0)
        let order = Locked<[Int]>([])
        queue.addOperation {
            gate.wait()  // the delegate is behind: holds the queue's own thread, never the pool's
            order.withLock { $0.append(1) }
        }
        queue.addOperation { order.withLock { $0.append(2) } }
        let thirdAdded = Locked(false)
        DispatchQueue(label: "test.socket-reader").async {
            queue.addOperation { order.withLock { $0.append(3) } }
            thirdAdded.withLock { $0 = true }
        }
        try await Task.sleep(for: .milliseconds(50))  // gives a wrong queue the chance to accept it
        #expect(!thirdAdded.current, "two operations pending: the third hand-over waits")
        gate.signal()
        try await Self.waitUntil { thirdAdded.current && order.current.count == 3 }
        #expect(order.current == [1, 2, 3])
        #expect(queue.peakPendingCount == 2)
    }

    @Test("a waiting hand-over goes on once half the bound has drained, not after every operation")
    func waitingHandOverResumesAtHalf() async throws {
        let queue = BoundedDelegateQueue(maxPending: 4)
        let gates = (0..<4).map { _ in DispatchSemaphore(value: 0) }
        for gate in gates { queue.addOperation { gate.wait() } }
        let fifthAdded = Locked(false)
        DispatchQueue(label: "test.socket-reader").async {
            queue.addOperation {}
            fifthAdded.withLock { $0 = true }
        }
        try await Self.waitUntil { queue.waitingCount == 1 }  // the reader's thread may start late
        gates[0].signal()
        try await Task.sleep(for: .milliseconds(50))
        #expect(!fifthAdded.current, "3 of 4 pending: above half, the hand-over still waits")
        gates[1].signal()
        try await Self.waitUntil { fifthAdded.current }
        gates[2].signal()
        gates[3].signal()
        try await Self.waitUntil { queue.pendingCount == 0 }
        #expect(queue.peakPendingCount == 4)
    }

    @Test("an operation added from the queue itself never waits for the queue")
    func addingFromTheQueueDoesNotWait() async throws {
        let queue = BoundedDelegateQueue(maxPending: 1)
        let ran = Locked(false)
        queue.addOperation {
            queue.addOperation { ran.withLock { $0 = true } }  // one pending already: would wait for itself
        }
        try await Self.waitUntil { ran.current }
    }
}
