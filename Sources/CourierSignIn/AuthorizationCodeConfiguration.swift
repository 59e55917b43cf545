import Courier
import Foundation

/// Where and as whom an app signs in with the authorization code flow (RFC 6749 §4.1) and PKCE
/// (RFC 7636), as a public native client (RFC 8252).
public struct AuthorizationCodeConfiguration: Sendable, Hashable {
    /// The authorization endpoint (RFC 6749 §3.1), opened in the browser.
    public var authorizationEndpoint: URL
    /// The token endpoint (RFC 6749 §3.2) the code is exchanged at.
    public var tokenEndpoint: URL
    /// `client_id` (RFC 6749 §2.2).
    public var clientID: String
    /// `redirect_uri` (RFC 6749 §3.1.2), registered with the server: a private-use scheme such as
    /// `com.example.app:/oauth2redirect` or an HTTPS URL the app claims (RFC 8252 §7).
    public var redirectURI: URL
    /// The scopes requested, sent space-separated as `scope` (RFC 6749 §3.3); none when empty.
    public var scopes: [String]
    /// More authorization request parameters (`prompt`, `login_hint`, …), sorted by name. The
    /// parameters the flow sets itself are never overridden.
    public var additionalParameters: [String: String]
    /// The token request's idle timeout (rounded up to whole seconds, at least 1 s); 30 s by default.
    public var timeout: Duration
    /// The authorization server's issuer identifier (RFC 8414 §2 `issuer`, e.g.
    /// `"https://auth.example.com"`), against which the callback's `iss` parameter is checked
    /// (RFC 9207 §2.4: simple string comparison). When set, a callback whose `iss` differs is
    /// refused with ``AuthorizationCodeError/issuerMismatch`` and its code is never sent: it came
    /// from another authorization server than the one the request went to (a mix-up attack). `nil`
    /// (the default): `iss` is not checked.
    public var issuer: String?
    /// Whether the authorization server always sends `iss` in its callbacks — its metadata's
    /// `authorization_response_iss_parameter_supported` (RFC 9207 §3). When `true` and ``issuer``
    /// is set, a callback without `iss` is refused with ``AuthorizationCodeError/issuerMismatch``
    /// (RFC 9207 §2.4). `false` by default.
    public var issuerParameterSupported: Bool = false

    /// Creates a configuration.
    public init(
        authorizationEndpoint: URL, tokenEndpoint: URL, clientID: String, redirectURI: URL,
        scopes: [String] = [], additionalParameters: [String: String] = [:], timeout: Duration = .seconds(30)
    ) {
        self.authorizationEndpoint = authorizationEndpoint
        self.tokenEndpoint = tokenEndpoint
        self.clientID = clientID
        self.redirectURI = redirectURI
        self.scopes = scopes
        self.additionalParameters = additionalParameters
        self.timeout = timeout
    }

    /// The scheme the presenter waits for: the redirect URI's, lowercased.
    public var callbackScheme: String {
        (redirectURI.scheme ?? "").lowercased()
    }
}
