import Foundation
import Testing
@testable import Courier

/// `PerOriginLimiter`: slots per origin, waiters in arrival order, a cancelled waiter leaves at once.
@Suite("PerOriginLimiter", .timeLimit(.minutes(1)))
struct PerOriginLimiterTests {
    @Test("origins: scheme, host and port, lowercased, default ports filled in")
    func origins() {
        #expect(PerOriginLimiter.origin(of: URL(string: "https://API.example.com/a?b")) == "https://api.example.com:443")
        #expect(PerOriginLimiter.origin(of: URL(string: "http://example.com:8080/")) == "http://example.com:8080")
        #expect(PerOriginLimiter.origin(of: URL(string: "http://example.com/")) == "http://example.com:80")
        #expect(PerOriginLimiter.origin(of: URL(string: "file:///tmp/x")) == nil)
    }

    @Test("a slot freed goes to the longest waiter; other origins never wait for it")
    func slotsPassInArrivalOrder() async throws {
        let limiter = PerOriginLimiter(limit: 1)
        try await limiter.acquire("a")
        try await limiter.acquire("b")  // another origin: its own slots
        let order = Locked<[Int]>([])
        var waiters: [Task<Void, any Error>] = []
        for index in 0..<3 {
            waiters.append(
                Task {
                    try await limiter.acquire("a")
                    order.withLock { $0.append(index) }
                    limiter.release("a")
                })
            // Queued in this order: each waits before the next starts.
            while limiter.waiterCount(of: "a") < index + 1 { await Task.yield() }
        }
        limiter.release("a")
        for waiter in waiters { try await waiter.value }
        #expect(order.withLock { $0 } == [0, 1, 2])
        #expect(limiter.holders(of: "a") == 0)
        #expect(limiter.holders(of: "b") == 1)
    }

    @Test("a waiter whose task is cancelled throws at once and takes no slot")
    func cancelledWaiterLeaves() async throws {
        let limiter = PerOriginLimiter(limit: 1)
        try await limiter.acquire("a")
        let waiter = Task { try await limiter.acquire("a") }
        while limiter.waiterCount(of: "a") < 1 { await Task.yield() }
        waiter.cancel()
        await #expect(throws: CancellationError.self) { try await waiter.value }
        #expect(limiter.waiterCount(of: "a") == 0)
        limiter.release("a")
        #expect(limiter.holders(of: "a") == 0)
        // An already cancelled task never queues.
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await limiter.acquire("a")
        }
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(limiter.holders(of: "a") == 0)
    }
}
