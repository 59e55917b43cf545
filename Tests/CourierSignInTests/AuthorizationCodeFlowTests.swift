import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
@testable import CourierSignIn
import CourierTesting

/// The sign-in module's tests.
enum SignInTests {}

extension SignInTests {
    /// The authorization URL, the PKCE challenge and the callback checks of the authorization code
    /// flow, against a stub token endpoint.
    @Suite struct AuthorizationCodeFlowUnit {
        static let configuration = AuthorizationCodeConfiguration(
            authorizationEndpoint: URL(string: "https://id.example.test/authorize?tenant=a")!,
            tokenEndpoint: URL(string: "https://id.example.test/token")!,
            clientID: "ios app+1",
            redirectURI: URL(string: "com.example.app:/oauth2redirect")!,
            scopes: ["openid", "profile"],
            additionalParameters: ["prompt": "login", "state": "ignored"])
        static let rfcVerifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"

        static func tokenStub() -> StubTransport {
            StubTransport { _ in
                .status(200, body: #"{"access_token":"at","token_type":"Bearer","expires_in":300,"refresh_token":"rt"}"#)
            }
        }

        static func flow(
            _ transport: StubTransport, store: InMemoryTokenStore = InMemoryTokenStore(),
            configuration: AuthorizationCodeConfiguration = configuration
        ) -> AuthorizationCodeFlow {
            let manager = TokenManager(store: store, transport: transport, grant: .oauth2(tokenURL: configuration.tokenEndpoint))
            return AuthorizationCodeFlow(configuration: configuration, tokenManager: manager, transport: transport)
        }

        static func query(_ url: URL) -> [String: String] {
            var result: [String: String] = [:]
            for item in URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedQueryItems ?? [] {
                result[item.name] = item.value?.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }
            return result
        }

        @Test func theS256ChallengeMatchesRFC7636AppendixB() throws {
            let key = try #require(ProofKey(verifier: Self.rfcVerifier))
            #expect(key.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        }

        @Test func randomVerifiersAre43UnreservedCharactersAndDiffer() {
            let first = ProofKey.random().verifier
            let second = ProofKey.random().verifier
            #expect(first.count == 43)
            #expect(ProofKey.isValidVerifier(first))
            #expect(first != second)
            #expect(ProofKey(verifier: String(repeating: "a", count: 42)) == nil)
            #expect(ProofKey(verifier: String(repeating: "a", count: 129)) == nil)
            #expect(ProofKey(verifier: String(repeating: "a", count: 42) + "+") == nil)
        }

        @Test func theAuthorizationURLCarriesEveryParameterFormEncoded() async throws {
            let flow = Self.flow(Self.tokenStub())
            let key = try #require(ProofKey(verifier: Self.rfcVerifier))
            let url = try await flow.authorizationURL(state: "s-1", proofKey: key)
            #expect(url.absoluteString.hasPrefix("https://id.example.test/authorize?tenant=a&response_type=code&"))
            let query = Self.query(url)
            #expect(query["client_id"] == "ios app+1")
            #expect(url.absoluteString.contains("client_id=ios+app%2B1"))
            #expect(query["redirect_uri"] == "com.example.app:/oauth2redirect")
            #expect(query["scope"] == "openid profile")
            #expect(query["state"] == "s-1")
            #expect(query["code_challenge"] == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
            #expect(query["code_challenge_method"] == "S256")
            #expect(query["prompt"] == "login")
            #expect(url.absoluteString.components(separatedBy: "state=").count == 2)  // not overridden
        }

        @Test func eachAttemptHasAFreshStateAndChallenge() async throws {
            let flow = Self.flow(Self.tokenStub())
            let first = Self.query(try await flow.authorizationURL())
            let second = Self.query(try await flow.authorizationURL())
            #expect(first["state"] != second["state"])
            #expect(first["code_challenge"] != second["code_challenge"])
            #expect((first["state"]?.count ?? 0) >= 22)
        }

        @Test func aGoodCallbackExchangesTheCodeWithTheVerifierAndSignsIn() async throws {
            let stub = Self.tokenStub()
            let store = InMemoryTokenStore()
            let flow = Self.flow(stub, store: store)
            let key = try #require(ProofKey(verifier: Self.rfcVerifier))
            _ = try await flow.authorizationURL(state: "s-1", proofKey: key)
            let tokens = try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect?code=c%2B1&state=s-1")!)
            #expect(tokens.accessToken == "at")
            #expect(store.read()?.refreshToken == "rt")
            let request = try #require(stub.requests.first)
            #expect(request.httpMethod == "POST")
            #expect(request.url?.absoluteString == "https://id.example.test/token")
            #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
            let body = String(decoding: request.httpBody ?? Data(), as: UTF8.self)
            #expect(
                body == "grant_type=authorization_code&code=c%2B1&redirect_uri=com.example.app%3A%2Foauth2redirect"
                    + "&client_id=ios+app%2B1&code_verifier=\(Self.rfcVerifier)")
        }

        @Test func aWrongOrMissingStateIsRefusedWithoutAnExchange() async throws {
            let stub = Self.tokenStub()
            let flow = Self.flow(stub)
            for callback in ["?code=c&state=other", "?code=c", "?code=c&state=s-1&state=s-1"] {
                _ = try await flow.authorizationURL(state: "s-1", proofKey: .random())
                await #expect(throws: AuthorizationCodeError.stateMismatch) {
                    try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect" + callback)!)
                }
            }
            #expect(stub.requestCount == 0)
        }

        /// RFC 9207 §2.4: with an issuer configured, a callback from another issuer — or without
        /// `iss` from a server that always sends it, or with two — is refused before its code or
        /// error is read, and nothing is sent; the right `iss` (form-encoded) signs in.
        @Test func aCallbackFromAnotherIssuerIsRefusedWithoutAnExchange() async throws {
            var configuration = Self.configuration
            configuration.issuer = "https://id.example.test"
            configuration.issuerParameterSupported = true
            let stub = Self.tokenStub()
            let flow = Self.flow(stub, configuration: configuration)
            let evil = "iss=https%3A%2F%2Fevil.example.test"
            let good = "iss=https%3A%2F%2Fid.example.test"
            for callback in [
                "?code=c&state=s-1&\(evil)", "?code=c&state=s-1", "?code=c&state=s-1&\(good)&\(evil)",
                "?code=c&state=s-1&iss=https%3A%2F%2Fid.example.test%2F", "?error=access_denied&state=s-1&\(evil)",
            ] {
                _ = try await flow.authorizationURL(state: "s-1", proofKey: .random())
                await #expect(throws: AuthorizationCodeError.issuerMismatch, "\(callback)") {
                    try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect" + callback)!)
                }
            }
            #expect(stub.requestCount == 0)

            _ = try await flow.authorizationURL(state: "s-1", proofKey: .random())
            let tokens = try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect?code=c&state=s-1&\(good)")!)
            #expect(tokens.accessToken == "at")
            #expect(stub.requestCount == 1)
        }

        /// A server that does not always send `iss` (``AuthorizationCodeConfiguration/issuerParameterSupported``
        /// false): a callback without it is accepted, one with another is still refused. Without
        /// an issuer configured, `iss` is not read.
        @Test func issIsCheckedOnlyAsConfigured() async throws {
            var configuration = Self.configuration
            configuration.issuer = "https://id.example.test"
            let stub = Self.tokenStub()
            let flow = Self.flow(stub, configuration: configuration)
            _ = try await flow.authorizationURL(state: "s-1", proofKey: .random())
            #expect(
                try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect?code=c&state=s-1")!).accessToken
                    == "at")
            _ = try await flow.authorizationURL(state: "s-1", proofKey: .random())
            await #expect(throws: AuthorizationCodeError.issuerMismatch) {
                try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect?code=c&state=s-1&iss=other")!)
            }

            let unchecked = Self.flow(stub)
            _ = try await unchecked.authorizationURL(state: "s-1", proofKey: .random())
            let tokens = try await unchecked.handleCallback(
                URL(string: "com.example.app:/oauth2redirect?code=c&state=s-1&iss=other")!)
            #expect(tokens.accessToken == "at")
            #expect(stub.requestCount == 2)
        }

        @Test func anErrorResponseIsTypedWithTheServersCode() async throws {
            let stub = Self.tokenStub()
            let flow = Self.flow(stub)
            _ = try await flow.authorizationURL(state: "s-1", proofKey: .random())
            await #expect(
                throws: AuthorizationCodeError.authorizationFailed(
                    error: "access_denied", description: "The user said no", uri: nil)
            ) {
                try await flow.handleCallback(
                    URL(
                        string:
                            "com.example.app:/oauth2redirect?error=access_denied&error_description=The+user%20said+no&state=s-1")!
                )
            }
            #expect(stub.requestCount == 0)
        }

        @Test func otherCallbacksAreTypedErrors() async throws {
            let stub = Self.tokenStub()
            let flow = Self.flow(stub)
            await #expect(throws: AuthorizationCodeError.noPendingAuthorization) {
                try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect?code=c&state=s")!)
            }
            _ = try await flow.authorizationURL(state: "s-1", proofKey: .random())
            await #expect(throws: AuthorizationCodeError.redirectURIMismatch) {
                try await flow.handleCallback(URL(string: "com.evil.app:/oauth2redirect?code=c&state=s-1")!)
            }
            // A foreign redirect leaves the attempt pending; the next callback ends it.
            await #expect(throws: AuthorizationCodeError.missingAuthorizationCode) {
                try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect?state=s-1")!)
            }
            await #expect(throws: AuthorizationCodeError.noPendingAuthorization) {
                try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect?code=c&state=s-1")!)
            }
            #expect(stub.requestCount == 0)
        }

        @Test func aRefusedExchangeIsTypedAndAServerFailureIsANetworkError() async throws {
            let stub = StubTransport(responses: [
                .status(400, body: #"{"error":"invalid_grant","error_description":"bad verifier"}"#),
                .status(503, body: "{}"),
            ])
            let store = InMemoryTokenStore()
            let flow = Self.flow(stub, store: store)
            _ = try await flow.authorizationURL(state: "s-1", proofKey: .random())
            await #expect(
                throws: AuthorizationCodeError.tokenRequestRejected(
                    statusCode: 400, error: "invalid_grant", description: "bad verifier")
            ) {
                try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect?code=c&state=s-1")!)
            }
            _ = try await flow.authorizationURL(state: "s-2", proofKey: .random())
            await #expect(throws: NetworkError.self) {
                try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect?code=c&state=s-2")!)
            }
            #expect(store.read() == nil)
        }

        /// Two sign-ins, one after the other: the first attempt's code exchange is still in flight
        /// when the user starts a second attempt (another account) and finishes it. The first
        /// exchange's late answer must not replace the second account's tokens.
        @Test func aReplacedAttemptsLateExchangeDoesNotOverwriteTheNewerSignIn() async throws {
            let (released, release) = AsyncStream<Void>.makeStream()
            let stub = StubTransport { request in
                let body = String(decoding: request.httpBody ?? Data(), as: UTF8.self)
                if body.contains("code=code-a&") {
                    // Held until the second sign-in is done (bounded: at most 10 s).
                    _ = await withTaskGroup(of: Void.self) { group in
                        group.addTask { for await _ in released { return } }
                        group.addTask { try? await Task.sleep(for: .seconds(10)) }
                        await group.next()
                        group.cancelAll()
                    }
                    return .status(200, body: #"{"access_token":"at-a","token_type":"Bearer","refresh_token":"rt-a"}"#)
                }
                return .status(200, body: #"{"access_token":"at-b","token_type":"Bearer","refresh_token":"rt-b"}"#)
            }
            let store = InMemoryTokenStore()
            let flow = Self.flow(stub, store: store)
            _ = try await flow.authorizationURL(state: "s-a", proofKey: .random())
            let first = Task {
                try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect?code=code-a&state=s-a")!)
            }
            for _ in 0..<500 where stub.requestCount == 0 { try await Task.sleep(for: .milliseconds(10)) }
            #expect(stub.requestCount == 1)

            _ = try await flow.authorizationURL(state: "s-b", proofKey: .random())
            let second = try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect?code=code-b&state=s-b")!)
            #expect(second.accessToken == "at-b")
            release.yield()
            release.finish()

            await #expect(throws: AuthorizationCodeError.cancelled) { try await first.value }
            #expect(store.read()?.accessToken == "at-b")
            #expect(store.read()?.refreshToken == "rt-b")
        }

        /// The user closes the sign-in page (the presenter throws `cancelled`); the browser's
        /// redirect for that attempt then reaches the app anyway (a private-use-scheme URL
        /// delivered to its URL handler). The cancelled attempt must not sign the user in.
        @Test func aCallbackForACancelledAttemptDoesNotSignIn() async throws {
            struct ClosedPage: AuthorizationPresenting {
                let opened: Locked<URL?>
                func present(_ url: URL, callbackScheme: String) async throws -> URL {
                    opened.set(url)
                    throw AuthorizationCodeError.cancelled
                }
            }
            let stub = Self.tokenStub()
            let store = InMemoryTokenStore()
            let flow = Self.flow(stub, store: store)
            let presenter = ClosedPage(opened: Locked(nil))
            await #expect(throws: AuthorizationCodeError.cancelled) { try await flow.signIn(using: presenter) }
            let state = try #require(presenter.opened.current.flatMap { Self.query($0)["state"] })
            await #expect(throws: AuthorizationCodeError.noPendingAuthorization) {
                try await flow.handleCallback(URL(string: "com.example.app:/oauth2redirect?code=late&state=\(state)")!)
            }
            #expect(stub.requestCount == 0)
            #expect(store.read() == nil)
        }

        /// RFC 6749 §7.1: a token of another type than Bearer (`DPoP`) is refused with a typed
        /// error and not stored; `bearer` in any case, or no `token_type`, is accepted.
        @Test func aTokenOfAnotherTypeThanBearerIsRefusedAndNotStored() async throws {
            let callback = URL(string: "com.example.app:/oauth2redirect?code=c&state=s-1")!
            for accepted in [#""token_type":"bearer","#, #""token_type":"BEARER","#, ""] {
                let stub = StubTransport { _ in
                    .status(200, body: #"{"access_token":"at",\#(accepted)"expires_in":300,"refresh_token":"rt"}"#)
                }
                let flow = Self.flow(stub)
                _ = try await flow.authorizationURL(state: "s-1", proofKey: .random())
                #expect(try await flow.handleCallback(callback).accessToken == "at")
            }

            let stub = StubTransport { _ in
                .status(200, body: #"{"access_token":"at","token_type":"DPoP","expires_in":300,"refresh_token":"rt"}"#)
            }
            let store = InMemoryTokenStore()
            let flow = Self.flow(stub, store: store)
            _ = try await flow.authorizationURL(state: "s-1", proofKey: .random())
            await #expect(
                throws: AuthorizationCodeError.tokenRequestRejected(
                    statusCode: 200, error: "unsupported_token_type", description: #"token_type "DPoP" is not Bearer"#)
            ) {
                try await flow.handleCallback(callback)
            }
            #expect(store.read() == nil)
        }
    }
}
