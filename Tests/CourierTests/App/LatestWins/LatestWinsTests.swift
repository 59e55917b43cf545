import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

@Suite("Latest wins: a new call of a key cancels the previous one", .timeLimit(.minutes(1)))
struct LatestWinsTests {
    @Test("the superseded call ends as .cancelled and its operation sees the cancellation; the latest returns")
    func supersedes() async throws {
        let gate = LatestWins()
        let clock = TestClock(mode: .manual)
        let sawCancellation = Locked(false)
        let first = Task {
            try await gate.run(key: "search") { () -> String in
                do {
                    try await clock.sleep(for: .seconds(60))  // a slow answer
                } catch {
                    sawCancellation.set(true)
                    throw error
                }
                return "stale"
            }
        }
        try await clock.waitForSleepers(count: 1)
        let second = try await gate.run(key: "search") { "fresh" }
        #expect(second == "fresh")
        await #expect(throws: NetworkError.cancelled) { try await first.value }
        #expect(sawCancellation.current)
    }

    /// An operation that does not check for cancellation (a response already on its way, a
    /// cache read) finishes after a newer call started: its value or its error is stale.
    @Test("a superseded call whose operation finishes anyway ends as .cancelled, not with its stale value or error")
    func supersededOperationThatFinishesAnyway() async throws {
        let gate = LatestWins()
        for outcome in ["stale value", "stale error"] {
            let started = AsyncStream<Void>.makeStream()
            let release = AsyncStream<Void>.makeStream()
            let older = Task {
                try await gate.run(key: "search") { () -> String in
                    started.continuation.yield()
                    for await _ in release.stream { break }  // ignores the cancellation
                    if outcome == "stale error" { throw NetworkError.offline(URLError(.notConnectedToInternet)) }
                    return outcome
                }
            }
            for await _ in started.stream { break }
            #expect(try await gate.run(key: "search") { "fresh" } == "fresh")
            release.continuation.yield()
            await #expect(throws: NetworkError.cancelled, "\(outcome)") { try await older.value }
        }
    }

    /// Measured before: the superseded caller waited for its operation (here, until the test
    /// opened the gate; with an operation that never ends, for ever).
    @Test("a superseded call ends at once, without waiting for an operation that ignores cancellation")
    func supersededCallerDoesNotWaitForItsOperation() async throws {
        let gate = LatestWins()
        let started = AsyncStream<Void>.makeStream()
        let held = TransportGate()  // waits whatever happens to the waiting task: ignores cancellation
        let finished = Locked(false)
        let older = Task {
            try await gate.run(key: "search") { () -> String in
                started.continuation.yield()
                await held.wait()
                finished.set(true)
                return "stale"
            }
        }
        for await _ in started.stream { break }
        #expect(try await gate.run(key: "search") { "fresh" } == "fresh")
        await #expect(throws: NetworkError.cancelled) { try await older.value }
        #expect(!finished.current, "the superseded caller returned before its operation ended")
        await held.open()
    }

    @Test("a cancelled caller ends at once, without waiting for an operation that ignores cancellation")
    func cancelledCallerDoesNotWaitForItsOperation() async throws {
        let gate = LatestWins()
        let started = AsyncStream<Void>.makeStream()
        let held = TransportGate()  // waits whatever happens to the waiting task: ignores cancellation
        let call = Task {
            try await gate.run { () -> Int in
                started.continuation.yield()
                await held.wait()
                return 1
            }
        }
        for await _ in started.stream { break }
        call.cancel()
        await #expect(throws: NetworkError.cancelled) { try await call.value }
        await held.open()
    }

    @Test("calls of other keys are independent")
    func keysAreIndependent() async throws {
        let gate = LatestWins()
        let clock = TestClock(mode: .manual)
        let slow = Task {
            try await gate.run(key: "a") {
                try await clock.sleep(for: .seconds(1))
                return 1
            }
        }
        try await clock.waitForSleepers(count: 1)
        #expect(try await gate.run(key: "b") { 2 } == 2)
        clock.advance(by: .seconds(1))
        #expect(try await slow.value == 1)
    }

    @Test("with a debounce, calls that a newer one supersedes while they wait never run")
    func debounce() async throws {
        let clock = TestClock(mode: .manual)
        let gate = LatestWins(debounce: .milliseconds(300), clock: clock)
        let runs = Locked<[String]>([])
        var tasks: [Task<String, any Error>] = []
        for text in ["l", "la", "lam"] {
            // Each keystroke 100 ms after the previous one, well inside the 300 ms debounce.
            let deadline = clock.now.advanced(by: .milliseconds(300))
            tasks.append(
                Task {
                    try await gate.run {
                        runs.withLock { $0.append(text) }
                        return text
                    }
                })
            try await clock.waitForSleeper(until: deadline)
            if text != "lam" { clock.advance(by: .milliseconds(100)) }
        }
        clock.advance(by: .milliseconds(300))
        #expect(try await tasks[2].value == "lam")
        for task in tasks.prefix(2) { await #expect(throws: NetworkError.cancelled) { try await task.value } }
        #expect(runs.current == ["lam"])
    }

    @Test("an error of the latest call reaches its caller as it is")
    func errorsPassThrough() async throws {
        let gate = LatestWins()
        let offline = NetworkError.offline(URLError(.notConnectedToInternet))
        await #expect(throws: offline) { try await gate.run { () -> Int in throw offline } }
    }
}
