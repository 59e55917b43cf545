import Courier
import Foundation

/// Why a sign-in with the authorization code flow (RFC 6749 §4.1, RFC 7636) failed.
///
/// Transport failures of the token request (offline, timeout, 5xx) are thrown as `NetworkError`,
/// and a token store that cannot be written as `TokenStoreError`; everything specific to the
/// flow is one of these cases.
public enum AuthorizationCodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A callback arrived while no authorization was pending (none was started, or its callback
    /// was already handled: every attempt accepts exactly one callback).
    case noPendingAuthorization
    /// The callback URL is not the configured redirect URI (scheme, host, port and path differ).
    case redirectURIMismatch
    /// The callback's `state` is missing or differs from the one sent (RFC 6749 §10.12: a forged or
    /// stale callback). Nothing was sent to the token endpoint.
    case stateMismatch
    /// The callback's `iss` is not ``AuthorizationCodeConfiguration/issuer`` — or is missing from a
    /// server that always sends it (``AuthorizationCodeConfiguration/issuerParameterSupported``):
    /// the response did not come from the authorization server the request went to (RFC 9207
    /// §2.4, a mix-up attack). Nothing was sent to the token endpoint.
    case issuerMismatch
    /// The authorization server answered with an error (RFC 6749 §4.1.2.1), e.g. `access_denied`
    /// when the user declined. `description` is the server's `error_description`, `uri` its
    /// `error_uri`, when sent.
    case authorizationFailed(error: String, description: String?, uri: String?)
    /// The callback carries neither `code` nor `error`.
    case missingAuthorizationCode
    /// The token endpoint refused the code exchange (RFC 6749 §5.2: a 400 or 401, e.g.
    /// `invalid_grant` for a used or expired code, or a `code_verifier` that does not match the
    /// challenge). `error` is the OAuth error code when the server sent one. Also thrown, with
    /// the token response's status and `error` `unsupported_token_type`, when the endpoint issued
    /// a token of another type than Bearer (`DPoP`, `mac`): Courier sends tokens only as
    /// `Authorization: Bearer`, and a client must not use a token type it does not understand
    /// (RFC 6749 §7.1). A response without `token_type` is read as Bearer.
    case tokenRequestRejected(statusCode: Int, error: String?, description: String?)
    /// The user closed the sign-in sheet (the presenter reports it); nothing to show. Also thrown
    /// by ``AuthorizationCodeFlow/handleCallback(_:)`` when a newer attempt started while this
    /// one's code was being exchanged: the newer attempt replaced it, and its tokens are not stored.
    case cancelled

    public var description: String {
        switch self {
        case .noPendingAuthorization:
            return "no authorization is pending for this callback"
        case .redirectURIMismatch:
            return "the callback URL is not the configured redirect URI"
        case .stateMismatch:
            return "the callback's state does not match the authorization request (RFC 6749 §10.12)"
        case .issuerMismatch:
            return "the callback's issuer is not the authorization server the request went to (RFC 9207)"
        case .authorizationFailed(let error, let description, _):
            return "the authorization server refused: \(error)" + (description.map { " — \($0)" } ?? "")
        case .missingAuthorizationCode:
            return "the callback carries no authorization code"
        case .tokenRequestRejected(let statusCode, let error, let description):
            var text = "the token endpoint refused the code (HTTP \(statusCode))"
            if let error { text += ": \(error)" }
            if let description { text += " — \(description)" }
            return text
        case .cancelled:
            return "sign-in was cancelled"
        }
    }
}
