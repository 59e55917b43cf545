import Courier
import Foundation

/// Shows the authorization server's sign-in page in a browser the user trusts and returns the
/// redirect it ends with (RFC 8252 §4: native apps use an external user agent, never an embedded
/// web view).
///
/// On Apple platforms `WebAuthenticationSessionPresenter` uses `ASWebAuthenticationSession`;
/// elsewhere (and in tests) supply your own.
public protocol AuthorizationPresenting: Sendable {
    /// Opens `url` and returns the callback URL once the browser is redirected to a URL with
    /// scheme `callbackScheme`.
    ///
    /// - Throws: ``AuthorizationCodeError/cancelled`` when the user closed the page; any other
    ///   error when the page could not be shown.
    func present(_ url: URL, callbackScheme: String) async throws -> URL
}
