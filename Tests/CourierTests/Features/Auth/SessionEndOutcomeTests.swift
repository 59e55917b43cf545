import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// Concurrent calls of one session whose access token the server revoked and whose refresh token
/// it refuses: every call ends the same way, whether its 401 came before the refusal (it waited
/// for the refresh) or after it (its session was already over).
@Suite("Every call of a session that ended gets the session's end")
struct SessionEndOutcomeTests {
    static let tokenURL = URL(string: "https://auth.example.test/token")!

    /// A token endpoint that refuses every refresh token (`invalid_grant`), counting the refreshes.
    static func refusingTokenEndpoint() -> StubTransport {
        StubTransport { request in
            HTTPResponse(
                statusCode: 400, headers: ["Content-Type": "application/json"],
                body: Data(#"{"error":"invalid_grant"}"#.utf8), url: request.url)
        }
    }

    /// An API that answers 401 (`invalid_token`) to everything: the first request at once, the
    /// others only after `tokens` no longer holds a session, so their 401s come after the refusal.
    static func revokingServer(_ tokens: TokenManager) -> StubTransport {
        let first = Locked(true)
        return StubTransport { request in
            let isFirst = first.withLock { first in
                defer { first = false }
                return first
            }
            if !isFirst {
                let clock = ContinuousClock()
                let start = clock.now
                while (try? await tokens.isSignedIn()) != false, clock.now - start < .seconds(5) {
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            return HTTPResponse(
                statusCode: 401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#], body: Data(),
                url: request.url)
        }
    }

    @Test("8 calls, the token revoked, the refresh refused: one refresh, and every call ends with sessionExpired")
    func everyCallOfAnExpiredSessionEndsWithSessionExpired() async throws {
        let tokenEndpoint = Self.refusingTokenEndpoint()
        let tokens = TokenManager(store: InMemoryTokenStore(), transport: tokenEndpoint, grant: .oauth2(tokenURL: Self.tokenURL))
        try await tokens.signIn(AuthTokens(accessToken: "revoked", refreshToken: "refused"))
        let server = Self.revokingServer(tokens)
        let client = StandardClientFixture.client(server, tokenManager: tokens)
        let errors = await withTaskGroup(of: NetworkError?.self) { group in
            for index in 0..<8 {
                group.addTask {
                    do {
                        _ = try await client.send(Request<Data>.get("/accounts/\(index)", policy: .authorizedRead))
                        return nil
                    } catch {
                        return error as? NetworkError
                    }
                }
            }
            var errors: [NetworkError?] = []
            for await error in group { errors.append(error) }
            return errors
        }
        #expect(errors.count == 8)
        #expect(errors.allSatisfy { $0 == .sessionExpired }, "\(errors)")
        #expect(tokenEndpoint.requestCount == 1)
        #expect(server.requestCount == 8, "nothing was sent twice")
    }

    @Test("a 401 that comes after a sign-out ends as signedOut; after another user's sign-in, the 401 is the answer")
    func afterASignOutOrAnotherSignIn() async throws {
        for signsInAgain in [false, true] {
            let tokens = TokenManager(
                store: InMemoryTokenStore(), transport: Self.refusingTokenEndpoint(), grant: .oauth2(tokenURL: Self.tokenURL))
            try await tokens.signIn(AuthTokens(accessToken: "alice", refreshToken: "r-alice"))
            let server = StubTransport { request in
                // The session changes while the request is at the server.
                try await tokens.signOut()
                if signsInAgain { try await tokens.signIn(AuthTokens(accessToken: "bob", refreshToken: "r-bob")) }
                return HTTPResponse(
                    statusCode: 401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#], body: Data(),
                    url: request.url)
            }
            let client = StandardClientFixture.client(server, tokenManager: tokens)
            let error = await StandardClientFixture.networkError {
                try await client.send(Request<Data>.get("/me", policy: .authorizedRead))
            }
            if signsInAgain {
                guard case .unauthorized? = error else {
                    Issue.record("expected the 401 as unauthorized, got \(String(describing: error))")
                    continue
                }
            } else {
                #expect(error == .signedOut)
            }
            #expect(server.requestCount == 1, "never sent again with another sign-in's token")
        }
    }
}
