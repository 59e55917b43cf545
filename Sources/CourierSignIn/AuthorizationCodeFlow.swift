import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Signs a user in with the OAuth 2.0 authorization code flow (RFC 6749 §4.1) and PKCE
/// (RFC 7636, method `S256`), the way RFC 8252 asks native apps to: the sign-in page opens in the
/// system browser, the app keeps a secret `code_verifier`, and only the app that started the
/// attempt can exchange the code.
///
/// ```swift
/// func signIn(client: APIClient, tokenManager: TokenManager, presenter: some AuthorizationPresenting) async throws {
///     let flow = AuthorizationCodeFlow(
///         configuration: AuthorizationCodeConfiguration(
///             authorizationEndpoint: URL(string: "https://id.example.com/authorize")!,
///             tokenEndpoint: URL(string: "https://id.example.com/token")!,
///             clientID: "ios-app",
///             redirectURI: URL(string: "com.example.app:/oauth2redirect")!,
///             scopes: ["openid", "profile"]),
///         tokenManager: tokenManager,
///         transport: client.configuration.transport)
///     try await flow.signIn(using: presenter)
/// }
/// ```
///
/// Each attempt (``authorizationURL()``) makes a new random `state` and `code_verifier` and
/// replaces any earlier attempt. ``handleCallback(_:)`` accepts one callback per attempt: it
/// checks the redirect URI and `state` (RFC 6749 §10.12) before anything else, reads an error
/// response (§4.1.2.1), and only then sends the code with its verifier to the token endpoint
/// (§4.1.3) through the given transport — straight, not through the pipeline. The tokens go to
/// `TokenManager.signIn(_:)`, which stores them and refreshes them from then on.
public actor AuthorizationCodeFlow {
    /// The endpoints, client and redirect URI.
    public let configuration: AuthorizationCodeConfiguration
    private let tokenManager: TokenManager
    private let transport: any Transport
    private let now: @Sendable () -> Date
    private var pending: (state: String, proofKey: ProofKey, attempt: Int)?
    /// How many attempts were started: the number of the newest one.
    private var attempts = 0

    /// Creates a flow.
    ///
    /// - Parameters:
    ///   - configuration: The endpoints, client and redirect URI.
    ///   - tokenManager: Receives the tokens.
    ///   - transport: Sends the token request; pass the client's (`client.configuration.transport`)
    ///     for one connection pool and one set of TLS rules.
    ///   - now: The wall clock `expires_in` counts from; injectable for tests.
    public init(
        configuration: AuthorizationCodeConfiguration, tokenManager: TokenManager, transport: any Transport,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.configuration = configuration
        self.tokenManager = tokenManager
        self.transport = transport
        self.now = now
    }

    /// Opens the authorization page with `presenter`, handles its callback and signs in. When the
    /// presenter throws (the user closed the page), the attempt ends: a callback for it arriving
    /// later fails with ``AuthorizationCodeError/noPendingAuthorization``.
    ///
    /// - Returns: The stored tokens.
    /// - Throws: ``AuthorizationCodeError`` (including ``AuthorizationCodeError/cancelled``),
    ///   `NetworkError` when the token request failed in transit, `TokenStoreError` when the
    ///   tokens could not be stored.
    @discardableResult
    public func signIn(using presenter: some AuthorizationPresenting) async throws -> AuthTokens {
        let url = try authorizationURL()
        let attempt = attempts
        let callback: URL
        do {
            callback = try await presenter.present(url, callbackScheme: configuration.callbackScheme)
        } catch {
            // The attempt ended without a callback (the user closed the page): a late callback for
            // it must not sign the user in after all.
            if pending?.attempt == attempt { pending = nil }
            throw error
        }
        return try await handleCallback(callback)
    }

    /// Starts an attempt and returns the URL to open: `response_type=code`, `client_id`,
    /// `redirect_uri`, `scope`, a random `state`, `code_challenge` and `code_challenge_method=S256`,
    /// form-encoded after the endpoint's own query (RFC 6749 §4.1.1, RFC 7636 §4.3).
    ///
    /// - Throws: `NetworkError.invalidRequest(_:)` when the authorization endpoint is not an
    ///   absolute URL.
    public func authorizationURL() throws -> URL {
        try authorizationURL(state: ProofKey.base64URL(ProofKey.randomBytes(16)), proofKey: .random())
    }

    /// ``authorizationURL()`` with a given `state` and proof key (tests).
    package func authorizationURL(state: String, proofKey: ProofKey) throws -> URL {
        guard var components = URLComponents(url: configuration.authorizationEndpoint, resolvingAgainstBaseURL: true),
            components.scheme != nil
        else {
            throw NetworkError.invalidRequest("the authorization endpoint is not an absolute URL")
        }
        var parameters: [(String, String)] = [
            ("response_type", "code"), ("client_id", configuration.clientID),
            ("redirect_uri", configuration.redirectURI.absoluteString),
        ]
        if !configuration.scopes.isEmpty { parameters.append(("scope", configuration.scopes.joined(separator: " "))) }
        parameters += [("state", state), ("code_challenge", proofKey.challenge), ("code_challenge_method", ProofKey.method)]
        let reserved = Set(parameters.map(\.0))
        parameters += configuration.additionalParameters.sorted { $0.key < $1.key }
            .filter { !reserved.contains($0.key) }.map { ($0.key, $0.value) }
        let encoded = RefreshTokenGrant.formEncoded(parameters)
        components.percentEncodedQuery = [components.percentEncodedQuery, encoded]
            .compactMap { $0?.isEmpty == false ? $0 : nil }.joined(separator: "&")
        guard let url = components.url else {
            throw NetworkError.invalidRequest("the authorization URL cannot be built")
        }
        attempts += 1
        pending = (state, proofKey, attempts)
        return url
    }

    /// Handles the redirect that ends an attempt: checks it, exchanges the code and signs in.
    ///
    /// A callback for another redirect URI leaves the attempt pending; any other callback ends it
    /// (one callback per attempt, whatever its outcome). When a newer attempt starts while the
    /// code is being exchanged, the tokens are not stored (they would replace the newer
    /// attempt's, perhaps another account's) and ``AuthorizationCodeError/cancelled`` is thrown.
    ///
    /// - Returns: The stored tokens.
    /// - Throws: ``AuthorizationCodeError`` — `noPendingAuthorization`, `redirectURIMismatch`,
    ///   `stateMismatch`, `issuerMismatch` (nothing is sent), `authorizationFailed` (the server's `error`),
    ///   `missingAuthorizationCode`, `tokenRequestRejected` (a 400/401 from the token endpoint, or
    ///   a `token_type` other than Bearer — nothing is stored), `cancelled` (a newer attempt
    ///   started during the exchange — nothing is stored);
    ///   `NetworkError` when the token request failed in transit or its answer was not a token
    ///   response; `TokenStoreError` when the tokens could not be stored.
    @discardableResult
    public func handleCallback(_ url: URL) async throws -> AuthTokens {
        guard let attempt = pending else { throw AuthorizationCodeError.noPendingAuthorization }
        guard Self.sameEndpoint(url, configuration.redirectURI) else { throw AuthorizationCodeError.redirectURIMismatch }
        pending = nil
        let parameters = Self.formDecoded(URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedQuery)
        func single(_ name: String) -> String? {
            let values = parameters.filter { $0.0 == name }
            return values.count == 1 ? values[0].1 : nil
        }
        guard let state = single("state"), state == attempt.state else { throw AuthorizationCodeError.stateMismatch }
        try checkIssuer(parameters.filter { $0.0 == "iss" }.map(\.1))
        if let error = single("error") {
            throw AuthorizationCodeError.authorizationFailed(
                error: error, description: single("error_description"), uri: single("error_uri"))
        }
        guard let code = single("code"), !code.isEmpty else { throw AuthorizationCodeError.missingAuthorizationCode }
        let tokens = try await exchange(code: code, verifier: attempt.proofKey.verifier)
        // A newer attempt started while the code was exchanged replaced this one (the user may be
        // signing in as someone else): its tokens must not overwrite that attempt's.
        guard attempts == attempt.attempt else { throw AuthorizationCodeError.cancelled }
        try await tokenManager.signIn(tokens)
        return tokens
    }

    /// RFC 9207 §2.4: with an ``AuthorizationCodeConfiguration/issuer``, the callback's `iss`
    /// (form-decoded, compared as a string) must be it — and must be there when the server always
    /// sends it. More than one `iss` is refused as well.
    private func checkIssuer(_ values: [String]) throws {
        guard let issuer = configuration.issuer else { return }
        switch values.count {
        case 0:
            if configuration.issuerParameterSupported { throw AuthorizationCodeError.issuerMismatch }
        case 1:
            if values[0] != issuer { throw AuthorizationCodeError.issuerMismatch }
        default:
            throw AuthorizationCodeError.issuerMismatch
        }
    }

    /// The token request (RFC 6749 §4.1.3, RFC 7636 §4.5) and its answer (§5.1, §5.2).
    private func exchange(code: String, verifier: String) async throws -> AuthTokens {
        let parameters = [
            ("grant_type", "authorization_code"), ("code", code),
            ("redirect_uri", configuration.redirectURI.absoluteString),
            ("client_id", configuration.clientID), ("code_verifier", verifier),
        ]
        var request = URLRequest(url: configuration.tokenEndpoint)
        request.httpMethod = "POST"
        request.timeoutInterval = RequestBuilder.idleTimeout(for: configuration.timeout)
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        request.setValue("no-store", forHTTPHeaderField: "Cache-Control")
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(RefreshTokenGrant.formEncoded(parameters).utf8)
        let response: HTTPResponse
        do {
            // The answer stops at the token response limit, as a refresh's does.
            response = try await TransportReporter.$bound.withValue(RefreshTokenGrant.responseReporter) {
                try await transport.send(request)
            }
        } catch {
            throw NetworkError(error)
        }
        let receivedAt = now()
        do {
            return try RefreshTokenGrant.parseOAuth2Response(
                response, current: AuthTokens(accessToken: "", refreshToken: nil, expiresAt: nil), receivedAt: receivedAt)
        } catch let rejection as TokenRefreshRejection {
            throw AuthorizationCodeError.tokenRequestRejected(
                statusCode: rejection.statusCode ?? response.statusCode, error: rejection.error,
                description: rejection.errorDescription)
        }
    }

    /// Whether `callback` is `redirectURI` apart from its query and fragment (scheme and host
    /// compared case-insensitively).
    private static func sameEndpoint(_ callback: URL, _ redirectURI: URL) -> Bool {
        guard let a = URLComponents(url: callback, resolvingAgainstBaseURL: true),
            let b = URLComponents(url: redirectURI, resolvingAgainstBaseURL: true)
        else { return false }
        return a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
            && a.port == b.port && a.percentEncodedPath == b.percentEncodedPath
    }

    /// The name/value pairs of a form-encoded query (`+` is a space), in order.
    private static func formDecoded(_ query: String?) -> [(String, String)] {
        guard let query, !query.isEmpty else { return [] }
        return query.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ text: Substring) -> String {
                let spaced = text.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }
}
