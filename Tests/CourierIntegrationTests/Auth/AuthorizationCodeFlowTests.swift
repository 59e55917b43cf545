import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierSignIn
import CourierTesting

/// Stands in for the browser: loads the authorization URL with a plain URLSession that does not
/// follow redirects and returns the `Location` of the server's 302 (the callback the browser would
/// hand to the app). `rewrite` lets a test tamper with the callback.
struct RedirectCapturingPresenter: AuthorizationPresenting {
    var rewrite: @Sendable (URL) -> URL = { $0 }

    final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
        ) {
            completionHandler(nil)
        }
    }

    func present(_ url: URL, callbackScheme: String) async throws -> URL {
        let session = URLSession(configuration: .ephemeral, delegate: NoRedirects(), delegateQueue: nil)
        defer { session.finishTasksAndInvalidate() }
        var request = URLRequest(url: url)
        request.timeoutInterval = 10
        let (_, response) = try await session.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        #expect(http.statusCode == 302)
        let location = try #require(http.value(forHTTPHeaderField: "Location").flatMap { URL(string: $0) })
        #expect(location.scheme == callbackScheme)
        return rewrite(location)
    }
}

extension AuthIntegrationTests {
    /// The authorization code flow with PKCE against the reference server's `/oauth/authorize` and
    /// `/oauth/token`, which checks the verifier against the challenge.
    @Suite(.serialized) struct AuthorizationCodeFlowIntegration {
        struct Setup {
            let flow: AuthorizationCodeFlow
            let client: APIClient
            let manager: TokenManager
            let store: InMemoryTokenStore
            let namespace: String

            func stats() async throws -> ServerStats { ServerStats(try await TestServers.stats(namespace: namespace)) }
        }

        static func setUp(extra: [String: String] = [:], issuer: String? = nil) throws -> Setup {
            let namespace = TestServers.makeNamespace("pkce")
            let environment = try TestServers.apiEnvironment(namespace: namespace)
            let transport = TestTransport.make()
            let store = InMemoryTokenStore()
            let manager = TokenManager(
                store: store, transport: transport,
                grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("auth/refresh")))
            let client = APIClient(environment: environment) {
                $0.transport = transport
                $0.interceptors = [AuthInterceptor(tokenManager: manager)]
            }
            var configuration = AuthorizationCodeConfiguration(
                authorizationEndpoint: environment.baseURL.appendingPathComponent("oauth/authorize"),
                tokenEndpoint: environment.baseURL.appendingPathComponent("oauth/token"),
                clientID: "courier-tests",
                redirectURI: URL(string: "com.example.courier:/oauth2redirect")!,
                scopes: ["profile"], additionalParameters: extra)
            configuration.issuer = issuer
            configuration.issuerParameterSupported = issuer != nil
            let flow = AuthorizationCodeFlow(
                configuration: configuration, tokenManager: manager, transport: client.configuration.transport)
            return Setup(flow: flow, client: client, manager: manager, store: store, namespace: namespace)
        }

        @Test func signingInStoresTheTokensAndAnAuthorizedCallSucceeds() async throws {
            let setup = try Self.setUp(extra: ["login_hint": "carol"])
            let tokens = try await setup.flow.signIn(using: RedirectCapturingPresenter())
            #expect(setup.store.read()?.accessToken == tokens.accessToken)
            #expect(tokens.refreshToken != nil)
            #expect(try await setup.manager.isSignedIn())
            let me = try await setup.client.send(AuthSession.me)
            #expect(me.username == "carol")
            let stats = try await setup.stats()
            #expect(stats.int("auth", "codeExchanges") == 1)
            #expect(stats.int("auth", "codeExchangeSuccesses") == 1)
            #expect(stats.authorized == 1)
        }

        @Test func aWrongVerifierIsRefusedByTheServer() async throws {
            let setup = try Self.setUp()
            // The browser's callback is handled by another attempt (its verifier is not the one
            // the code was issued for): the state is replayed so only the verifier differs.
            let first = try await setup.flow.authorizationURL()
            let callback = try await RedirectCapturingPresenter().present(first, callbackScheme: "com.example.courier")
            let state = URLComponents(url: callback, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "state" }?
                .value
            let code = URLComponents(url: callback, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "code" }?
                .value
            let second = try await setup.flow.authorizationURL()
            let secondState = try #require(
                URLComponents(url: second, resolvingAgainstBaseURL: false)?.queryItems?.first { $0.name == "state" }?.value)
            #expect(state != secondState)
            let firstCode = try #require(code)
            let forged = try #require(URL(string: "com.example.courier:/oauth2redirect?code=\(firstCode)&state=\(secondState)"))
            await #expect {
                try await setup.flow.handleCallback(forged)
            } throws: { error in
                guard case .tokenRequestRejected(400, "invalid_grant", _)? = error as? AuthorizationCodeError else {
                    return false
                }
                return true
            }
            #expect(setup.store.read() == nil)
            let stats = try await setup.stats()
            #expect(stats.int("auth", "codeExchanges") == 1)
            #expect(stats.int("auth", "codeExchangeFailures") == 1)
            #expect(stats.int("auth", "codeExchangeSuccesses") == 0)
        }

        @Test func aStateMismatchIsRefusedAndNoExchangeIsSent() async throws {
            let setup = try Self.setUp()
            let presenter = RedirectCapturingPresenter { url in
                URL(string: url.absoluteString.replacingOccurrences(of: "state=", with: "state=x")) ?? url
            }
            await #expect(throws: AuthorizationCodeError.stateMismatch) {
                try await setup.flow.signIn(using: presenter)
            }
            #expect(setup.store.read() == nil)
            let stats = try await setup.stats()
            #expect(stats.int("auth", "authorizeRequests") == 1)
            #expect(stats.int("auth", "codeExchanges") == 0)
        }

        /// The reference server sends `iss` (RFC 9207) in its redirects: with its issuer
        /// configured the sign-in goes through; with another (the request went to an authorization
        /// server the app did not mean) the callback is refused and the code is never exchanged.
        @Test(arguments: ["courier-test-server", "https://id.example.com"])
        func theCallbacksIssuerIsCheckedAgainstTheServersIss(issuer: String) async throws {
            let setup = try Self.setUp(issuer: issuer)
            if issuer == "courier-test-server" {
                try await setup.flow.signIn(using: RedirectCapturingPresenter())
                #expect(try await setup.manager.isSignedIn())
                #expect(try await setup.stats().int("auth", "codeExchanges") == 1)
            } else {
                await #expect(throws: AuthorizationCodeError.issuerMismatch) {
                    try await setup.flow.signIn(using: RedirectCapturingPresenter())
                }
                #expect(try await setup.stats().int("auth", "codeExchanges") == 0)
                #expect(try await setup.manager.isSignedIn() == false)
            }
        }

        @Test func aDeniedAuthorizationIsATypedError() async throws {
            let setup = try Self.setUp(extra: ["deny": "1"])
            await #expect {
                try await setup.flow.signIn(using: RedirectCapturingPresenter())
            } throws: { error in
                guard
                    case .authorizationFailed("access_denied", "The user denied the request", nil)? = error
                        as? AuthorizationCodeError
                else { return false }
                return true
            }
            #expect(try await setup.stats().int("auth", "codeExchanges") == 0)
            #expect(try await setup.manager.isSignedIn() == false)
        }
    }
}
