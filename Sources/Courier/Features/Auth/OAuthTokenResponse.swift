import Foundation

/// A successful OAuth 2.0 access-token response (RFC 6749 §5.1), as returned by a sign-in
/// (password, authorization-code) or refresh grant.
///
/// ```swift
/// let login = try await client.response(for: Request<OAuthTokenResponse>.post("/auth/login", body: credentials))
/// try await tokenManager.signIn(login.value.tokens(serverDate: login.response.date))
/// ```
///
/// Its tokens never leave through text: `description` and the mirror (what `print`, `dump`, string
/// interpolation and the debugger show) print `<redacted>`, as ``AuthTokens``' do.
public struct OAuthTokenResponse: Decodable, Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// `access_token`.
    public var accessToken: String
    /// `token_type`, e.g. `Bearer` (RFC 6750); `nil` when the server omitted it. Courier sends
    /// tokens only as `Authorization: Bearer`: ``RefreshTokenGrant/parseOAuth2Response(_:current:receivedAt:)``
    /// and the sign-in flow refuse another type (RFC 6749 §7.1). ``tokens(receivedAt:serverDate:keeping:)``
    /// does not check it — check it before signing in with a response you decode yourself.
    public var tokenType: String?
    /// `expires_in`: lifetime of the access token in seconds, when sent.
    public var expiresIn: Double?
    /// `refresh_token`, when the server issued one. A refresh response without one means "keep
    /// using the current refresh token" (RFC 6749 §6).
    public var refreshToken: String?
    /// `scope`, when sent.
    public var scope: String?

    private enum CodingKeys: String, CodingKey {
        case accessToken = "access_token"
        case tokenType = "token_type"
        case expiresIn = "expires_in"
        case refreshToken = "refresh_token"
        case scope
    }

    /// Creates a response value.
    package init(
        accessToken: String, tokenType: String? = "Bearer", expiresIn: Double? = nil,
        refreshToken: String? = nil, scope: String? = nil
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.scope = scope
    }

    /// Whether the token is a Bearer token (RFC 6750): `token_type` is `bearer` in any case
    /// (RFC 6749 §5.1), or absent (read leniently as Bearer).
    package var isBearer: Bool {
        tokenType.map { $0.lowercased() == "bearer" } ?? true
    }

    /// Decodes the JSON object; `expires_in` may be a number or a numeric string.
    ///
    /// - Throws: `DecodingError` when `access_token` is missing or empty, or a field has the
    ///   wrong type.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        accessToken = try container.decode(String.self, forKey: .accessToken)
        guard !accessToken.isEmpty else {
            throw DecodingError.dataCorruptedError(forKey: .accessToken, in: container, debugDescription: "empty access_token")
        }
        tokenType = try container.decodeIfPresent(String.self, forKey: .tokenType)
        if let seconds = try? container.decodeIfPresent(Double.self, forKey: .expiresIn) {
            expiresIn = seconds
        } else {
            expiresIn = try container.decodeIfPresent(String.self, forKey: .expiresIn).flatMap(Double.init)
        }
        refreshToken = try container.decodeIfPresent(String.self, forKey: .refreshToken).flatMap { $0.isEmpty ? nil : $0 }
        scope = try container.decodeIfPresent(String.self, forKey: .scope)
    }

    /// The tokens to store, with the expiry in this device's time frame (a device clock minutes
    /// or hours off the server's must not make a fresh token look expired, or an expired one
    /// valid).
    ///
    /// - Parameters:
    ///   - receivedAt: When the response arrived, by the local clock; `expires_in` counts from here.
    ///   - serverDate: The response's `Date` (RFC 9110 §6.6.1), when known. Without `expires_in`,
    ///     the JWT `exp` is shifted by `receivedAt − serverDate`.
    ///   - currentRefreshToken: The refresh token to keep when the response carries none.
    public func tokens(receivedAt: Date = Date(), serverDate: Date?, keeping currentRefreshToken: String? = nil) -> AuthTokens {
        var expiresAt = expiresIn.flatMap { $0.isFinite ? receivedAt.addingTimeInterval($0) : nil }
        if expiresAt == nil, let serverDate, let exp = JSONWebToken.claims(of: accessToken)?.expiration {
            expiresAt = exp.addingTimeInterval(receivedAt.timeIntervalSince(serverDate))
        }
        return AuthTokens(accessToken: accessToken, refreshToken: refreshToken ?? currentRefreshToken, expiresAt: expiresAt)
    }

    /// The tokens to store, `expires_in` counted from `receivedAt` (without a server `Date`, a
    /// JWT `exp` is used as written; prefer ``tokens(receivedAt:serverDate:keeping:)``).
    ///
    /// - Parameters:
    ///   - receivedAt: When the response arrived, by the local clock.
    ///   - currentRefreshToken: The refresh token to keep when the response carries none.
    public func tokens(receivedAt: Date = Date(), keeping currentRefreshToken: String? = nil) -> AuthTokens {
        tokens(receivedAt: receivedAt, serverDate: nil, keeping: currentRefreshToken)
    }

    public var description: String {
        "OAuthTokenResponse(access: <redacted>, refresh: \(refreshToken == nil ? "none" : "<redacted>"), expires_in: \(expiresIn.map { "\($0)" } ?? "none"))"
    }

    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "accessToken": "<redacted>", "tokenType": tokenType as Any, "expiresIn": expiresIn as Any,
                "refreshToken": refreshToken == nil ? "nil" : "<redacted>", "scope": scope as Any,
            ], displayStyle: .struct)
    }
}
