import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierOffline

/// The connectivity model while the token manager holds refreshes back. The API
/// itself answers 200; only the token endpoint (another host) answered 503. The app's
/// connectivity status should not say the API backend is unavailable.
@Suite("Connectivity while the token manager holds refreshes back", .timeLimit(.minutes(1)))
struct ConnectivityDuringTokenHoldTests {
    @Test func aHeldRefreshDoesNotMarkTheAPIBackendUnavailable() async throws {
        let monitor = OutcomeConnectivityMonitor()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let stub = StubTransport { request in
            if request.url?.host == "auth.example.test" {
                return HTTPResponse(statusCode: 503, headers: ["Retry-After": "60"], url: request.url)
            }
            return HTTPResponse(statusCode: 200, body: Data("{}".utf8), url: request.url)
        }
        let tokens = TokenManager(
            store: InMemoryTokenStore(
                AuthTokens(accessToken: "stale", refreshToken: "r1", expiresAt: start.addingTimeInterval(-60))),
            transport: stub, grant: .oauth2(tokenURL: URL(string: "https://auth.example.test/token")!), now: { start })
        let client = APIClient(environment: APIEnvironment(name: "unit", baseURL: URL(string: "https://api.example.test")!)) {
            $0.transport = stub
            $0.interceptors = .standard(tokenManager: tokens) + [monitor.interceptor]
        }
        let authorized = Request<Void>(method: .get, path: "/me", policy: .authorizedRead) { _, _ in }
        let first = await #expect(throws: NetworkError.self) { try await client.send(authorized) }
        let held = await #expect(throws: NetworkError.self) { try await client.send(authorized) }
        // An anonymous call to the API works meanwhile.
        try await client.send(Request<Void>.get("/health"))
        let afterHealthy = monitor.status
        _ = try? await client.send(authorized)  // another held call
        let status = monitor.status
        #expect(first?.statusCode == 503)
        #expect(held?.kind == .backendUnavailable)
        if case .backendUnavailable(let host, _)? = held { #expect(host == "auth.example.test") }
        #expect(afterHealthy == .online)
        #expect(status != .backendUnavailable, "the API answers 200, only the token endpoint is held: status \(status)")
    }
}
