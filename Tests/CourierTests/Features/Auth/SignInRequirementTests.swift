import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension AuthTests {
    /// A call made for one account (`SignInRequirement`, the offline queue's mutations) goes out
    /// only with a token of a sign-in current while that account is: a sign-in of another user
    /// after the check, or during the refresh the call waits for, ends it with `SignInMismatch`
    /// and nothing reaches the API. The proof is the stub transport's record of what was sent.
    @Suite(.timeLimit(.minutes(1))) struct SignInRequirementTests {
        static let tokenURL = AuthFixture.baseURL.appendingPathComponent("oauth/token")

        /// Records the bearer token of every API request; the token endpoint answers a pair for
        /// the user its refresh token names, after `refreshGate` opens.
        final class Server: Sendable {
            let apiTokens = Locked<[String]>([])
            let refreshStarted = AsyncGate()
            let refreshGate = AsyncGate()
            let transport: StubTransport

            init() {
                let apiTokens = apiTokens
                let refreshStarted = refreshStarted
                let refreshGate = refreshGate
                transport = StubTransport { request in
                    if request.url?.path.hasSuffix("/oauth/token") == true {
                        await refreshStarted.open()
                        await refreshGate.wait()
                        let body =
                            #"{"access_token":"u1-refreshed","token_type":"Bearer","expires_in":3600,"refresh_token":"u1-rt2"}"#
                        return HTTPResponse(statusCode: 200, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
                    }
                    let token = (request.value(forHTTPHeaderField: "Authorization") ?? "").replacingOccurrences(
                        of: "Bearer ", with: "")
                    apiTokens.withLock { $0.append(token) }
                    return .status(201)
                }
            }
        }

        static func client(_ server: Server, _ manager: TokenManager) -> APIClient {
            APIClient(environment: AuthFixture.environment) {
                $0.transport = server.transport
                $0.interceptors = [AuthInterceptor(tokenManager: manager)]
            }
        }

        static func tokens(_ user: String, expired: Bool = false) -> AuthTokens {
            AuthTokens(
                accessToken: "\(user)-a", refreshToken: "\(user)-rt", expiresAt: Date().addingTimeInterval(expired ? -60 : 3600))
        }

        static let write = Request<Void>(method: .post, path: "/transfers", policy: .standard.with(\.auth, .required))

        @Test func aCallForTheCurrentAccountGoesWithItsToken() async throws {
            let server = Server()
            let manager = TokenManager(store: InMemoryTokenStore(), grant: .oauth2(tokenURL: Self.tokenURL))
            try await manager.signIn(Self.tokens("u1"))
            let account = Locked<String?>("u1")
            _ = try await Self.client(server, manager).response(
                for: Self.write, requiredEnvironment: nil, requiredSignIn: SignInRequirement { account.current == "u1" })
            #expect(server.apiTokens.current == ["u1-a"])
        }

        @Test func aCallForAnAccountNoLongerCurrentIsNotSent() async throws {
            let server = Server()
            let manager = TokenManager(store: InMemoryTokenStore(), grant: .oauth2(tokenURL: Self.tokenURL))
            try await manager.signIn(Self.tokens("u2"))
            let account = Locked<String?>("u2")
            await #expect(throws: SignInMismatch()) {
                _ = try await Self.client(server, manager).response(
                    for: Self.write, requiredEnvironment: nil, requiredSignIn: SignInRequirement { account.current == "u1" })
            }
            #expect(server.apiTokens.current.isEmpty)
        }

        /// The refresh the call waits for is overtaken by another user's sign-in, which hands its
        /// token to the waiting calls: this call is refused instead of sent with it.
        @Test func aSignInOfAnotherUserDuringTheRefreshTheCallAwaitsEndsItUnsent() async throws {
            let server = Server()
            let manager = TokenManager(store: InMemoryTokenStore(), grant: .oauth2(tokenURL: Self.tokenURL))
            try await manager.signIn(Self.tokens("u1", expired: true))
            let account = Locked<String?>("u1")
            let client = Self.client(server, manager)
            let call = Task {
                try await client.response(
                    for: Self.write, requiredEnvironment: nil, requiredSignIn: SignInRequirement { account.current == "u1" })
            }
            await server.refreshStarted.wait()
            account.set(nil)
            try await manager.signIn(Self.tokens("u2"))
            account.set("u2")
            await server.refreshGate.open()
            await #expect(throws: SignInMismatch()) { _ = try await call.value }
            #expect(server.apiTokens.current.isEmpty)
            // Without a requirement, a call takes whoever is signed in (the ordinary behaviour).
            _ = try await client.response(for: Self.write)
            #expect(server.apiTokens.current == ["u2-a"])
        }
    }
}
