import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
@testable import CourierRealtime

/// While the ``TokenManager`` holds refreshes back (its token endpoint answered 503 with
/// `Retry-After: 120`), each reconnect attempt failed at once, and a policy of a few attempts
/// spent them within a second and ended the session. The next attempt now waits out the hold
/// (found by an independent probe).
@Suite("WebSocketClient: reconnecting during the token manager's hold", .timeLimit(.minutes(1)))
struct TokenHoldReconnectTests {
    @Test func aReconnectWaitsOutTheHoldInsteadOfSpendingItsAttempts() async throws {
        let refreshes = Locked(0)
        let tokens = TokenManager(
            store: InMemoryTokenStore(AuthTokens(accessToken: "a1", refreshToken: "r1")),
            transport: StubTransport { request in
                refreshes.withLock { $0 += 1 }
                return HTTPResponse(statusCode: 503, headers: ["Retry-After": "120"], url: request.url)
            },
            grant: .oauth2(tokenURL: URL(string: "https://auth.test/token")!))
        var configuration = WebSocketClient.Configuration(url: URL(string: "wss://live.test/ws")!)
        configuration.keepalive = nil
        configuration.reconnect = ReconnectPolicy(
            initialDelay: .milliseconds(10), maximumDelay: .milliseconds(40), maximumAttempts: 5)
        configuration.tokenManager = tokens
        let transport = FakeTransport(script: [.reject(401)])
        let clock = TestClock(mode: .manual)
        let client = WebSocketClient(configuration: configuration, transport: transport, clock: clock, random: { 0.5 })
        await client.connect()
        // Short backoffs are walked on the manual clock until one waits out the hold.
        let waited = Locked<Duration?>(nil)
        let describe: @Sendable () async -> String = { "\(await client.state)" }
        try await eventually("a backoff as long as the hold", state: describe) {
            guard case .reconnecting(_, let delay) = await client.state else { return false }
            if delay >= .seconds(100) {
                waited.set(delay)
                return true
            }
            try? await clock.waitForSleepers(count: 1)
            clock.advance(by: delay)
            return false
        }
        #expect(try #require(waited.current) <= .seconds(121))
        if case .closed = await client.state { Issue.record("the session ended during the hold") }
        #expect(refreshes.current == 1, "refreshes sent: \(refreshes.current)")
        #expect(transport.attempts == 1, "handshakes: \(transport.attempts)")
        await client.close()
    }
}
