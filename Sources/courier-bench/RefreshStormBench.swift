import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// Refresh storm: `requests` concurrent calls meet an expired access token. Goal: exactly one
/// refresh request reaches the server, every call succeeds; reported: the time until all calls
/// have drained. Run twice — the token manager reading the JWT `exp` (refresh before sending) and
/// a manager that trusts the token until the server answers 401 (every call is refused, then
/// retried once) — each in a fresh namespace of the reference server.
///
/// - Throws: When a call fails or the server saw more (or fewer) than one refresh.
func runRefreshStormBench(serverURL: URL, requests: Int = 1000) async throws {
    print("\nrefresh storm: \(requests) concurrent calls with an expired access token")
    for proactive in [true, false] {
        let result = try await refreshStorm(serverURL: serverURL, requests: requests, proactive: proactive)
        let mode = proactive ? "exp-aware (refresh before sending)" : "401-driven (server refuses first)"
        print(
            String(
                format: "  %@: %d × 200, %d refresh, %d × 401, drained in %.3f s",
                mode, result.succeeded, result.refreshCalls, result.unauthorized, result.seconds))
        guard result.refreshCalls == 1, result.succeeded == requests else {
            throw BenchFailure(
                description: "\(mode): expected 1 refresh and \(requests) successes, "
                    + "got \(result.refreshCalls) refreshes and \(result.succeeded) successes")
        }
    }
}

private struct StormResult {
    var succeeded: Int
    var refreshCalls: Int
    var unauthorized: Int
    var seconds: Double
}

private struct StormLogin: Encodable, Sendable {
    var username = "bench"
    var password = "secret"
    var accessTtl: Double
}

private struct StormMe: Decodable, Sendable {
    var jti: String
}

private struct StormStats: Decodable {
    struct Auth: Decodable { var unauthorized: Int }
    var refreshCalls: Int
    var auth: Auth
}

private func refreshStorm(serverURL: URL, requests: Int, proactive: Bool) async throws -> StormResult {
    let namespace = "bench-storm-\(UUID().uuidString.prefix(8).lowercased())"
    let base = serverURL.appendingPathComponent("ns").appendingPathComponent(namespace)
    let environment = APIEnvironment(name: "bench", baseURL: base)
    let transport = URLSessionTransport()
    // The 401-driven run uses a clock so far behind that every token looks valid to the client.
    let now: @Sendable () -> Date
    if proactive {
        now = { Date() }
    } else {
        now = { Date.distantPast }
    }
    let tokens = TokenManager(
        store: InMemoryTokenStore(), transport: transport,
        grant: .oauth2(tokenURL: base.appendingPathComponent("auth/refresh")), now: now)
    let client = APIClient(environment: environment) {
        $0.transport = transport
        $0.interceptors = [RequestIDInterceptor(), RetryInterceptor(), AuthInterceptor(tokenManager: tokens)]
    }

    // Sign in with a token that expired a minute ago; refreshed tokens live for an hour.
    let login = try await client.send(Request<OAuthTokenResponse>.post("/auth/login", body: StormLogin(accessTtl: -60)))
    try await tokens.signIn(login.tokens())
    var config = URLRequest(url: base.appendingPathComponent("auth/config"))
    config.httpMethod = "POST"
    config.setValue("application/json", forHTTPHeaderField: "Content-Type")
    config.httpBody = Data(#"{"accessTtl": 3600}"#.utf8)
    _ = try await URLSession.shared.data(for: config)

    let me = Request<StormMe>.get("/me").policy(EndpointPolicy.authorizedRead.with(\.deadline, .seconds(120)))
    let started = ContinuousClock.now
    let succeeded = try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<requests {
            group.addTask { _ = try await client.send(me) }
        }
        var count = 0
        for try await _ in group { count += 1 }
        return count
    }
    let elapsed = ContinuousClock.now - started

    let (data, _) = try await URLSession.shared.data(from: base.appendingPathComponent("_stats"))
    let stats = try JSONDecoder().decode(StormStats.self, from: data)
    return StormResult(
        succeeded: succeeded, refreshCalls: stats.refreshCalls, unauthorized: stats.auth.unauthorized,
        seconds: elapsed.benchSeconds)
}
