import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

@Suite("a token refresh ends at its time limit", .timeLimit(.minutes(1)))
struct RefreshTimeLimitTests {
    /// The token endpoint trickles its answer (a byte every 0.25 s for 30 s): the transport's idle
    /// timeout (2 s) never fires, and every caller waited on that one refresh for 30 s — a call
    /// started later joined it rather than starting another.
    @Test func aTokenEndpointThatTricklesItsAnswerFailsTheRefreshAtItsTimeLimit() async throws {
        let namespace = TestServers.makeNamespace("trickle")
        let clock = TestClock(mode: .manual)
        let (tokens, client) = try await Self.signedInThroughDrip(
            namespace: namespace, bytes: 120, seconds: 30, chunks: 120, timeout: 2, clock: clock
        ) { _, current in current }
        let refresh = Task { try await tokens.validAccessToken() }
        try await CoreLive.waitUntilServerSaw("/drip", namespace: namespace)
        // The refresh's time limit, 2 s on the client's clock (without one the wait ends unmet).
        _ = await Self.outcome(within: .seconds(10)) { try await clock.waitForSleeper(for: .seconds(2)) }
        clock.advance(by: .seconds(2))

        let outcome = await Self.outcome(within: .seconds(10)) {
            try await withTaskCancellationHandler {
                try await refresh.value
            } onCancel: {
                refresh.cancel()
            }
        }
        guard case .failure(let error as NetworkError)? = outcome, case .timedOut = error else {
            Issue.record("expected the refresh to time out, got \(String(describing: outcome))")
            return
        }
        #expect(try await TestServers.requestLog(namespace: namespace, path: "/drip").count == 1)
        withExtendedLifetime(client) {}
    }

    /// A custom grant whose request says "no time limit" the way apps often do
    /// (`.greatestFiniteMagnitude`, `.infinity`): the refresh is sent and answered. The time limit
    /// made a `Duration` of that many seconds, which traps past about 1.7e20 s, and URLSession on
    /// Linux traps on such a `timeoutInterval` itself: the app crashed at its first refresh.
    @Test(arguments: [TimeInterval.greatestFiniteMagnitude, .infinity])
    func aRefreshWhoseRequestHasAnEndlessTimeoutIsSentAndAnswered(timeout: TimeInterval) async throws {
        let namespace = TestServers.makeNamespace("endless")
        let (tokens, client) = try await Self.signedInThroughDrip(
            namespace: namespace, bytes: 10, seconds: 0, chunks: 1, timeout: timeout, clock: TestClock(mode: .manual)
        ) { response, _ in
            AuthTokens(accessToken: "fresh-\(response.data.count)", refreshToken: "r2", expiresAt: .distantFuture)
        }

        let outcome = await Self.outcome(within: .seconds(20)) { try await tokens.validAccessToken() }
        guard case .success(let token)? = outcome else {
            Issue.record("expected a refreshed token, got \(String(describing: outcome))")
            return
        }
        #expect(token == "fresh-10")
        #expect(try await TestServers.requestLog(namespace: namespace, path: "/drip").count == 1)
        withExtendedLifetime(client) {}
    }

    /// A token manager signed in with an expired access token, whose refresh is a `GET /drip`
    /// (`bytes` over `seconds` in `chunks`) with `timeout` as its `timeoutInterval`, read by
    /// `parse`; and the client that lends it its transport and `clock`.
    static func signedInThroughDrip(
        namespace: String, bytes: Int, seconds: Int, chunks: Int, timeout: TimeInterval, clock: TestClock,
        parse: @escaping RefreshTokenGrant.ResponseParser
    ) async throws -> (TokenManager, APIClient) {
        let environment = try TestServers.apiEnvironment(namespace: namespace)
        var components = try #require(
            URLComponents(url: environment.baseURL.appendingPathComponent("drip"), resolvingAgainstBaseURL: false))
        components.queryItems = [
            .init(name: "bytes", value: "\(bytes)"), .init(name: "seconds", value: "\(seconds)"),
            .init(name: "chunks", value: "\(chunks)"),
        ]
        let tokenURL = try #require(components.url)
        let grant = RefreshTokenGrant(
            makeRequest: { _ in
                var request = URLRequest(url: tokenURL)
                request.timeoutInterval = timeout
                return request
            },
            parseResponse: parse)
        let tokens = TokenManager(store: InMemoryTokenStore(), grant: grant)
        let (client, _) = try TestServers.apiClient(namespace: namespace) {
            $0.interceptors = .standard(tokenManager: tokens)
            $0.clock = clock
        }
        try await tokens.signIn(AuthTokens(accessToken: "expired", refreshToken: "r1", expiresAt: .distantPast))
        return (tokens, client)
    }

    /// The operation's result, or `nil` (the operation cancelled) when it takes longer than `limit`.
    static func outcome<T: Sendable>(
        within limit: Duration, _ operation: @escaping @Sendable () async throws -> T
    ) async -> Result<T, any Error>? {
        await withTaskGroup(of: Result<T, any Error>?.self) { group in
            group.addTask {
                do { return .success(try await operation()) } catch { return .failure(error) }
            }
            group.addTask {
                try? await Task.sleep(for: limit)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }
}
