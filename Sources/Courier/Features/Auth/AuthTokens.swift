import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The user's OAuth 2.0 credentials: a short-lived access token sent as `Authorization: Bearer`
/// (RFC 6750 §2.1) and the refresh token that buys the next one (RFC 6749 §1.5).
///
/// Secrets never leave through text: `description`, `debugDescription` and the mirror (what
/// `print`, `dump`, string interpolation and the debugger show) print `<redacted>`, so tokens do
/// not reach a log by accident. Store them only in a ``TokenStore`` — never in `UserDefaults` or a
/// URL query (RFC 6750 §5.3).
public struct AuthTokens: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The access token, usually a JWT (RFC 7519).
    public var accessToken: String
    /// The refresh token, `nil` when the server issued none (then the session ends when the
    /// access token expires).
    public var refreshToken: String?
    /// When the access token expires **by this device's clock**: the token response's
    /// `expires_in` (RFC 6749 §5.1) counted from local receipt, or the JWT `exp` corrected by the
    /// offset between the server's `Date` and the local clock at receipt (see
    /// ``OAuthTokenResponse/tokens(receivedAt:serverDate:keeping:)``); `nil` when unknown. Takes
    /// precedence over the JWT's own `exp`, which is in the server's time frame.
    public var expiresAt: Date?
    /// Which sign-in these tokens belong to: an opaque identifier (a UUID string) that
    /// ``TokenManager/signIn(_:)`` gives a new sign-in and every refresh of it keeps — the
    /// authorization grant behind the tokens (RFC 6749 §1.3), not a value any server sees. `nil`
    /// for tokens from before Courier kept it, or from a store that does not keep it; the first
    /// refresh of such tokens gives them one derived from the refresh token it spent, so that
    /// another process still holding them knows the refresh for one of the same sign-in.
    ///
    /// Processes that share one ``TokenStore`` (an app and its extensions) tell by it a refresh
    /// by the other process from another sign-in: when the server rotates refresh tokens
    /// (RFC 6749 §6, RFC 9700 §4.14.2), a refresh looks like a new user's tokens otherwise. A
    /// custom store must write and read it back with the tokens (``FileTokenStore`` and the
    /// Keychain store do); without it a rotated refresh token counts as another sign-in, and the
    /// calls waiting for a refresh end with ``NetworkError/signedOut``.
    public var grantID: String?

    /// Creates a credential pair of a new sign-in (no ``grantID``: ``TokenManager/signIn(_:)``
    /// gives it one).
    public init(accessToken: String, refreshToken: String?, expiresAt: Date? = nil) {
        self.init(accessToken: accessToken, refreshToken: refreshToken, expiresAt: expiresAt, grantID: nil)
    }

    /// Creates a credential pair with the ``grantID`` of its sign-in: what a custom ``TokenStore``
    /// reads back.
    public init(accessToken: String, refreshToken: String?, expiresAt: Date? = nil, grantID: String?) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.expiresAt = expiresAt
        self.grantID = grantID
    }

    /// When the access token stops being accepted, by this device's clock: ``expiresAt`` when
    /// known, else the JWT `exp` claim (RFC 7519 §4.1.4) as written (uncorrected for clock skew),
    /// else `nil` (unknown: only a 401 will tell).
    public var accessTokenExpiry: Date? {
        expiresAt ?? JSONWebToken.claims(of: accessToken)?.expiration
    }

    public var description: String {
        let expiry = accessTokenExpiry.map { " expiring \(HTTPDate.string(from: $0))" } ?? ""
        return "AuthTokens(access: <redacted>, refresh: \(refreshToken == nil ? "none" : "<redacted>")\(expiry))"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "accessToken": "<redacted>", "refreshToken": refreshToken == nil ? "nil" : "<redacted>",
                "expiresAt": expiresAt as Any, "grantID": grantID as Any,
            ], displayStyle: .struct)
    }
}

extension AuthTokens {
    /// The stored form used by ``FileTokenStore`` and the Keychain store: a small JSON object with
    /// `access_token`, `refresh_token`, `expires_at` (seconds since 1970) and `grant_id` (absent
    /// in what earlier versions wrote).
    private struct Stored: Codable {
        var accessToken: String
        var refreshToken: String?
        var expiresAt: Double?
        var grantID: String?

        enum CodingKeys: String, CodingKey {
            case accessToken = "access_token"
            case refreshToken = "refresh_token"
            case expiresAt = "expires_at"
            case grantID = "grant_id"
        }
    }

    /// Encodes the tokens for a ``TokenStore``.
    func storedRepresentation() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(
            Stored(
                accessToken: accessToken, refreshToken: refreshToken, expiresAt: expiresAt?.timeIntervalSince1970,
                grantID: grantID))
    }

    /// Decodes tokens written by ``storedRepresentation()``.
    ///
    /// - Throws: ``TokenStoreError/corrupted(_:)`` when `data` is not that shape.
    init(storedRepresentation data: Data) throws {
        guard let stored = try? JSONDecoder().decode(Stored.self, from: data), !stored.accessToken.isEmpty else {
            throw TokenStoreError.corrupted("the stored credentials are not a token object")
        }
        self.init(
            accessToken: stored.accessToken, refreshToken: stored.refreshToken,
            expiresAt: stored.expiresAt.map { Date(timeIntervalSince1970: $0) }, grantID: stored.grantID)
    }
}
