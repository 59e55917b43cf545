import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension AuthTests {
    /// Which transport a `TokenManager` refreshes through when it was given none.
    @Suite struct TokenManagerTransport {
        /// A token manager without a transport and outside any client fails the refresh with
        /// `.missingInterceptor` — the case named for a pipeline gap, for a missing transport.
        /// (Documents the naming; passes.)
        @Test func tokenManagerWithoutTransportNamesTheProblem() async throws {
            let manager = TokenManager(
                store: InMemoryTokenStore(
                    AuthTokens(accessToken: "a", refreshToken: "r", expiresAt: Date(timeIntervalSince1970: 0))),
                grant: .oauth2(tokenURL: URL(string: "https://auth.example.test/token")!))
            let error = await StandardClientFixture.networkError { try await manager.validAccessToken() }
            #expect(error?.kind == .invalidRequest)
        }

        /// Without a transport of its own, a token manager refreshes through the client whose call
        /// needed the refresh.
        @Test func aTokenManagerWithoutATransportRefreshesThroughItsClients() async throws {
            let stub = StubTransport { request in
                if request.url?.path.hasSuffix("/token") == true {
                    return .status(
                        200, body: #"{"access_token":"new","token_type":"Bearer","expires_in":300,"refresh_token":"r2"}"#)
                }
                let auth = request.value(forHTTPHeaderField: "Authorization")
                return auth == "Bearer new" ? .status(200, body: "{}") : .status(401)
            }
            let store = InMemoryTokenStore(AuthTokens(accessToken: "old", refreshToken: "r1"))
            let tokens = TokenManager(store: store, grant: .oauth2(tokenURL: URL(string: "https://auth.example.test/token")!))
            let client = StandardClientFixture.client(stub) { $0.interceptors = .standard(tokenManager: tokens) }
            _ = try await client.send(Request<Data>.get("/me", policy: .authorizedRead))
            #expect(stub.requests.map { $0.url?.path ?? "" } == ["/v1/me", "/token", "/v1/me"])
        }
    }
}
