import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension RetryIntegrationTests {
    /// `Retry-After` from the reference server, and cancellation during the wait.
    @Suite(.timeLimit(.minutes(2))) struct RetryAfterTests {
        @Test func twoUnavailableWithRetryAfterThenSuccess() async throws {
            let clock = TestClock()
            let session = try RetrySession.start(clock: clock)
            try await session.inject("GET", "/items", [["status": 503, "retryAfter": "1"], ["status": 503, "retryAfter": "1"]])
            let response = try await session.client.response(for: RetrySession.items)
            #expect(response.statusCode == 200)
            #expect(response.context.attempt == 3)
            #expect(clock.sleeps == [.seconds(1), .seconds(1)])  // the delays taken…
            #expect(response.context.retryDelays == [.seconds(1), .seconds(1)])
            #expect(response.context.retryRecords.map(\.delaySource) == [.retryAfter, .retryAfter])
            let stats = try await session.stats()
            #expect(stats.requests("GET /items") == 3)  // …and what the server saw
            #expect(stats.int("faults", "served") == 2)
        }

        @Test func tooManyRequestsWithRetryAfter() async throws {
            let clock = TestClock()
            let session = try RetrySession.start(clock: clock)
            try await session.inject("GET", "/items", [["status": 429, "retryAfter": "2"]])
            #expect(try await session.client.response(for: RetrySession.items).statusCode == 200)
            #expect(clock.sleeps == [.seconds(2)])
            #expect(try await session.stats().requests("GET /items") == 2)
        }

        /// The HTTP-date forms on the wire: IMF-fixdate and the two obsolete ones. The server
        /// rounds its time + 3 s up to a whole second, so the wait is at most 4 s, and at least 3 s
        /// less the time the call took to come back (a loaded machine delays the reading, not the
        /// server's date).
        @Test(arguments: ["date+3", "rfc850+3", "asctime+3"])
        func retryAfterHTTPDates(_ spec: String) async throws {
            let clock = TestClock()
            let session = try RetrySession.start(clock: clock)
            try await session.inject("GET", "/items", [["status": 503, "retryAfter": spec]])
            let sent = Date()
            let response = try await session.client.response(for: RetrySession.items)
            let elapsed = Date().timeIntervalSince(sent)
            #expect(response.statusCode == 200)
            let record = try #require(response.context.retryRecords.first)
            #expect(record.delaySource == .retryAfter)
            #expect(
                record.delay > .seconds(3 - elapsed) - .milliseconds(10) && record.delay <= .seconds(4),
                "\(record.delay) after \(elapsed) s")
            #expect(clock.sleeps == [record.delay])
        }

        /// A past date or a malformed value gives no hint: the normal backoff (0.5 s × jitter 0.5),
        /// not an immediate retry.
        @Test(arguments: ["date-30", "soon"])
        func unusableRetryAfterUsesBackoff(_ spec: String) async throws {
            let clock = TestClock()
            let session = try RetrySession.start(clock: clock, random: 0.5)
            try await session.inject("GET", "/items", [["status": 503, "retryAfter": spec]])
            let response = try await session.client.response(for: RetrySession.items)
            #expect(response.statusCode == 200)
            #expect(response.context.retryRecords.map(\.delaySource) == [.backoff])
            #expect(clock.sleeps == [.milliseconds(250)])
        }

        /// Real time: the server asks for 45 s, the task is cancelled while waiting; the call ends at
        /// once with the cancelled case and nothing more is sent. (The bound is far from both: a
        /// fresh-clone CI saw the whole parallel pass stall for 12 s, which a 20 s wait and a 10 s
        /// bound could not tell from waiting it out.)
        @Test func cancellationDuringRetryAfterEndsPromptly() async throws {
            let session = try RetrySession.start(clock: ContinuousClock())
            try await session.inject("GET", "/items", [["status": 503, "retryAfter": "45"]])
            let items = RetrySession.items.policy(.standard.with(\.deadline, .seconds(120)))
            let context = RequestContext(policy: items.policy, method: .get, pathTemplate: "/items")
            let call = Task { try await session.client.response(for: items, context: context) }
            // Cancel once the call is waiting out the Retry-After (bounded: at most 30 s of polling,
            // so a loaded machine cannot cancel before the first response arrived).
            for _ in 0..<3000 where context.retryDelays.isEmpty {
                try await Task.sleep(for: .milliseconds(10))
            }
            let cancelledAt = ContinuousClock.now
            call.cancel()
            let result = await call.result
            let elapsed = ContinuousClock.now - cancelledAt
            guard case .failure(let error as NetworkError) = result, error.isCancellation else {
                Issue.record("expected NetworkError.cancelled, got \(result)")
                return
            }
            #expect(elapsed < .seconds(30), "took \(elapsed) after the cancel")  // not the 45 s wait
            #expect(context.retryDelays == [.seconds(45)])  // it was waiting out the Retry-After
            #expect(context.attempt == 1)
            #expect(try await session.stats().requests("GET /items") == 1)
        }
    }
}
