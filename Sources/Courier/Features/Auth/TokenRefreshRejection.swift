import Foundation

/// The token endpoint refused the refresh token: the session is over and the user must sign in
/// again (RFC 6749 §5.2 — typically `400 {"error": "invalid_grant"}` for an expired, revoked or
/// already-used refresh token). Also thrown, with `error` `unsupported_token_type`, when the
/// endpoint answered with a token of another type than Bearer (`DPoP`, `mac`), which a client must
/// not use (RFC 6749 §7.1).
///
/// A ``RefreshTokenGrant`` parser throws this to make ``TokenManager`` end the session; any other
/// error it throws counts as a transient failure that keeps the user signed in. Callers of the
/// pipeline see ``NetworkError/sessionExpired``; observers see ``SessionEvent/sessionExpired(_:)``.
public struct TokenRefreshRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// The token endpoint's status, or `nil` when the session ended without asking the server
    /// (no refresh token was stored).
    public var statusCode: Int?
    /// The OAuth error code, e.g. `invalid_grant`, when the server sent one.
    public var error: String?
    /// The server's `error_description`, when sent (human-readable, never a token).
    public var errorDescription: String?

    /// Creates a rejection.
    package init(statusCode: Int?, error: String?, errorDescription: String? = nil) {
        self.statusCode = statusCode
        self.error = error
        self.errorDescription = errorDescription
    }

    /// The session ended because no refresh token was stored.
    package static let noRefreshToken = TokenRefreshRejection(
        statusCode: nil, error: "no_refresh_token", errorDescription: "No refresh token is stored")

    /// The token endpoint answered with a `token_type` other than Bearer (RFC 6749 §7.1):
    /// `statusCode` its status, `errorDescription` names the type.
    package static func unsupportedTokenType(_ tokenType: String, statusCode: Int) -> TokenRefreshRejection {
        TokenRefreshRejection(
            statusCode: statusCode, error: "unsupported_token_type",
            errorDescription: "token_type \"\(tokenType)\" is not Bearer")
    }

    public var description: String {
        var text = "refresh rejected"
        if let statusCode { text += " (HTTP \(statusCode))" }
        if let error { text += ": \(error)" }
        if let errorDescription { text += " — \(errorDescription)" }
        return text
    }
}
