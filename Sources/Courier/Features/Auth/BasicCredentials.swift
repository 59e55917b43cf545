import Foundation

/// A user-id and password for HTTP Basic authentication (RFC 7617), e.g. for a login endpoint
/// that exchanges them for tokens.
///
/// The header value is `Basic base64(user-id ":" password)` with both parts in UTF-8 (RFC 7617
/// §2.1, `charset="UTF-8"`), after Unicode normalisation form C as that section's profiles require.
/// Send it only over HTTPS: Basic credentials are not encrypted. Courier's ``Redactor`` hides the
/// value in every log, snapshot, cURL and HAR export (and the decoded password wherever the server
/// echoes it); `description`, `debugDescription` and `dump` show the user-id only.
///
/// ```swift
/// let login = try Request<OAuthTokenResponse>.post("/auth/login").basicAuth(user: email, password: password)
/// ```
public struct BasicCredentials: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The user-id, normalised (NFC).
    public let user: String
    /// The password, normalised (NFC).
    package let password: String

    /// Creates credentials.
    ///
    /// - Throws: ``HeaderFieldError/colonInUserID`` when `user` contains `:` (RFC 7617 §2: the first
    ///   colon separates user-id and password); ``HeaderFieldError/invalidValue(field:problem:)``
    ///   with ``HeaderFieldError/Problem/lineBreak`` or ``HeaderFieldError/Problem/controlCharacter``
    ///   when either part contains a control character (RFC 7617 §2 forbids them).
    public init(user: String, password: String) throws {
        let user = user.precomposedStringWithCanonicalMapping
        let password = password.precomposedStringWithCanonicalMapping
        guard !user.contains(":") else { throw HeaderFieldError.colonInUserID }
        for (part, text) in [("Basic user-id", user), ("Basic password", password)] {
            if text.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A }) {
                throw HeaderFieldError.invalidValue(field: part, problem: .lineBreak)
            }
            if text.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }) {
                throw HeaderFieldError.invalidValue(field: part, problem: .controlCharacter)
            }
        }
        self.user = user
        self.password = password
    }

    /// The `Authorization` field value: `Basic ` and the Base64 of the UTF-8 bytes of `user:password`.
    package var authorizationValue: String {
        "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }

    /// `Basic credentials for <user>` — never the password.
    public var description: String { "Basic credentials for \(user.debugDescription)" }
    /// Same as ``description``.
    public var debugDescription: String { description }
    /// Shows the user-id and a redacted password to `dump` and debuggers.
    public var customMirror: Mirror {
        Mirror(self, children: ["user": user, "password": "<redacted>"], displayStyle: .struct)
    }
}

extension HTTPHeaders {
    /// Sets `Authorization: Basic …` from `credentials` (RFC 7617), replacing any `Authorization`.
    public mutating func setBasicAuthorization(_ credentials: BasicCredentials) {
        replace("Authorization", with: credentials.authorizationValue)
    }
}

extension Request {
    /// A copy that sends `Authorization: Basic …` for `user` and `password` (RFC 7617) — for a login
    /// endpoint. Keep a policy without bearer auth (``EndpointPolicy/auth`` `.none`, as in
    /// ``EndpointPolicy/standard``), or the ``AuthInterceptor`` replaces the field with the bearer token.
    ///
    /// - Throws: See ``BasicCredentials/init(user:password:)``.
    public func basicAuth(user: String, password: String) throws -> Request {
        try basicAuth(BasicCredentials(user: user, password: password))
    }

    /// A copy that sends `Authorization: Basic …` for `credentials` (RFC 7617).
    public func basicAuth(_ credentials: BasicCredentials) -> Request {
        var copy = self
        copy.headers.setBasicAuthorization(credentials)
        return copy
    }
}
