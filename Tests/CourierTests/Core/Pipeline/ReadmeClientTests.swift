import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// The README's "production client", compiled and exercised (FileTokenStore stands in for the
/// Keychain store on Linux), so the documentation cannot drift from the API.
@Suite("README production client")
struct ReadmeClientTests {
    @Test("wires, signs in, sends the bearer token, caches, and logs out")
    func productionClient() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let stub = StubTransport { request in
            .json(#"{"id": 1}"#, headers: ["Cache-Control": "private, max-age=60"])
        }
        let tokens = TokenManager(
            store: FileTokenStore(fileURL: directory.appendingPathComponent("tokens.json")),
            grant: .oauth2(tokenURL: try #require(URL(string: "https://auth.example.com/oauth/token"))))
        let cache = HTTPCache(
            storage: DiskCacheStorage(directory: directory.appendingPathComponent("cache"), byteLimit: 50 << 20),
            partition: { "user-1" })
        let metrics = CapturingMetricsSink()
        let client = APIClient(
            environment: APIEnvironment(name: "production", baseURL: try #require(URL(string: "https://api.example.com/v1")))
        ) {
            $0.transport = stub
            $0.interceptors = .standard(
                tokenManager: tokens, cache: cache,
                logger: CapturingNetworkLogger(), metrics: metrics)
        }
        try await tokens.signIn(AuthTokens(accessToken: "access-1", refreshToken: "refresh-1"))

        struct Item: Decodable, Sendable { let id: Int }
        let read = Request<Item>.get("/items/1").policy(.authorizedRead)
        _ = try await client.send(read)
        let second = try await client.response(for: read)
        #expect(second.context.cacheOutcome == .hit)
        #expect(stub.requestCount == 1)
        #expect(stub.requests.first?.value(forHTTPHeaderField: "Authorization") == "Bearer access-1")
        #expect(metrics.events.count == 2)

        try await client.resetSession()
        #expect(try await tokens.isSignedIn() == false)
        let signedOut = await #expect(throws: NetworkError.self) { try await client.send(read) }  // not sent, not cached
        #expect(signedOut == .signedOut)
        #expect(stub.requestCount == 1)
    }
}
