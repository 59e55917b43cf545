import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// The retry budget and breaker against the reference server's always-failing endpoint: the
/// server's own request counter proves how many retries a burst sent.
@Suite struct RetryBudgetIntegrationTests {
    static let failing = Request<HTTPResponse>(method: .get, path: "/fleet/failing") { response, _ in response }

    static func client(budget: RetryBudget?, breaker: CircuitBreaker?) throws -> (APIClient, String) {
        try TestServers.apiClient(namespace: TestServers.makeNamespace("fleet")) {
            $0.interceptors = .standard(
                retry: RetryInterceptor(clock: TestClock(), random: { 0.5 }, budget: budget, circuitBreaker: breaker))
        }
    }

    /// Runs `calls` concurrent calls and returns how many failed fast (nothing sent).
    static func burst(_ client: APIClient, calls: Int) async -> (failedFast: Int, retries: Int) {
        await withTaskGroup(of: (Bool, Int).self) { group in
            for _ in 0..<calls {
                group.addTask {
                    do {
                        let response = try await client.response(for: failing)
                        return (false, response.context.retryRecords.count)
                    } catch NetworkError.backendUnavailable {
                        return (true, 0)
                    } catch {
                        return (false, -1)  // the attempts are counted by the server
                    }
                }
            }
            var totals = (failedFast: 0, retries: 0)
            for await (fast, retries) in group {
                if fast { totals.failedFast += 1 }
                totals.retries += max(0, retries)
            }
            return totals
        }
    }

    @Test func aBurstToAFailingHostSendsAtMostTheBudgetedRetries() async throws {
        let (client, namespace) = try Self.client(
            budget: RetryBudget(retryRatio: 0.2, minimumRetriesPerSecond: 0), breaker: nil)
        _ = await Self.burst(client, calls: 50)
        let sent = ServerStats(try await TestServers.stats(namespace: namespace)).requests("GET /fleet/failing")
        // 50 first attempts; without a budget the policy's two retries each would make 150.
        #expect(sent >= 50)
        #expect(sent <= 60, "\(sent) requests: more than 50 first attempts + 20 % retries")
    }

    @Test func theBreakerStopsTheBurstAndLaterCallsSendNothing() async throws {
        // A cool-down longer than the test clock's sleeps can add up to.
        let breaker = CircuitBreaker(coolDown: Backoff(initialDelay: .seconds(600), maximumDelay: .seconds(600), jitter: .none))
        let (client, namespace) = try Self.client(budget: .standard, breaker: breaker)
        let (failedFast, _) = await Self.burst(client, calls: 50)
        let sent = ServerStats(try await TestServers.stats(namespace: namespace)).requests("GET /fleet/failing")
        let firstAttempts = 50 - failedFast
        // Retries at most 20 % of the first attempts sent plus the floor of 2 in the window.
        #expect(sent - firstAttempts <= firstAttempts / 5 + 2, "\(sent) requests for \(firstAttempts) first attempts")
        // The breaker is open now: the next call fails fast and sends nothing.
        let after = ServerStats(try await TestServers.stats(namespace: namespace)).requests("GET /fleet/failing")
        let error = await #expect(throws: NetworkError.self) { try await client.send(Self.failing) }
        #expect(error?.kind == .backendUnavailable)
        #expect(ServerStats(try await TestServers.stats(namespace: namespace)).requests("GET /fleet/failing") == after)
    }

    /// A retry planned and then not sent (its call cancelled during the backoff) gives its share
    /// of the budget back: it used to stay withdrawn, and the next call's retry was refused
    /// (`budgetExhausted`) although no retry had reached the host.
    @Test func aRetryCancelledInItsWaitGivesItsBudgetBack() async throws {
        let clock = TestClock(mode: .manual)
        // One retry per window, whatever the traffic.
        let budget = RetryBudget(retryRatio: 0, minimumRetriesPerSecond: 0.1, window: .seconds(10))
        let (client, namespace) = try TestServers.apiClient(namespace: TestServers.makeNamespace("fleet")) {
            $0.interceptors = .standard(
                retry: RetryInterceptor(clock: clock, random: { 0.5 }, budget: budget, circuitBreaker: nil))
        }
        let failing = Request<HTTPResponse>(
            method: .get, path: "/fleet/failing", policy: .standard.with(\.retry, RetryPolicy(maxRetries: 1))
        ) { response, _ in response }
        // The first call's retry is planned (withdrawn from the budget), then the call is cancelled
        // while it waits.
        let first = Task { try await client.response(for: failing) }
        try await clock.waitForSleepers(count: 1)
        first.cancel()
        await #expect(throws: NetworkError.cancelled) { try await first.value }
        // The next call may retry: nothing was sent for the first one's retry.
        let ended = Locked(false)
        let second = Task {
            defer { ended.set(true) }
            return try await client.response(for: failing)
        }
        // Its retry's wait (if it plans one) passes on the test clock; bounded.
        let limit = ContinuousClock.now + .seconds(30)
        while !ended.current, ContinuousClock.now < limit {
            if clock.sleeperCount > 0 { clock.advance(by: .seconds(5)) }
            try await Task.sleep(for: .milliseconds(10))
        }
        let error = await #expect(throws: NetworkError.self) { try await second.value }
        #expect(error?.statusCode == 503)
        // One attempt of the cancelled call, two of the next one (its retry was not refused).
        #expect(try await TestServers.requestCount("GET /fleet/failing", namespace: namespace) == 3)
    }
}
