import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension AuthIntegrationTests {
    /// What a token endpoint's answer shows of itself once decoded.
    @Suite struct TokenResponseTextTests {
        /// `dump` of the reference server's sign-in answer (an `OAuthTokenResponse`, or the
        /// `Response` holding it) printed `accessToken: "eyJhbGciOi…"` and `refreshToken: …` whole,
        /// where its `description` shows `<redacted>`: an app dumping the result of its sign-in
        /// call put both tokens in its log.
        @Test func aSignInAnswerDumpsWithoutItsTokens() async throws {
            let namespace = TestServers.makeNamespace("auth")
            let environment = try TestServers.apiEnvironment(namespace: namespace)
            let client = APIClient(environment: environment) { $0.transport = TestTransport.make() }
            let login = try await client.response(
                for: Request<OAuthTokenResponse>.post("/auth/login", body: AuthSession.Login(accessTtl: 3600)))
            // The server's own bytes hold both tokens.
            let sent = try JSONSerialization.jsonObject(with: login.response.data) as? [String: Any]
            let accessToken = try #require(sent?["access_token"] as? String)
            let refreshToken = try #require(sent?["refresh_token"] as? String)
            #expect(login.value.accessToken == accessToken && login.value.refreshToken == refreshToken)

            var dumpedValue = ""
            dump(login.value, to: &dumpedValue)
            var dumpedResponse = ""
            dump(login, to: &dumpedResponse)
            let texts = ["\(login.value)", String(reflecting: login.value), dumpedValue, dumpedResponse]
            for text in texts {
                #expect(!text.contains(accessToken) && !text.contains(refreshToken), "\(text.prefix(600))")
            }
            #expect(dumpedValue.contains("expiresIn") && dumpedValue.contains("<redacted>"))
        }
    }
}
