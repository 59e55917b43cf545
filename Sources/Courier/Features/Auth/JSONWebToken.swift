import Foundation

/// Reads the registered claims of a JSON Web Token (RFC 7519) **without verifying it**.
///
/// The client only needs `exp` to refresh a little before expiry; it cannot verify the signature
/// (it does not hold the key) and must not trust the claims for anything else — the server
/// verifies every token it receives.
package enum JSONWebToken {
    /// The registered claims Courier reads (RFC 7519 §4.1). Every field is optional.
    package struct Claims: Sendable, Hashable {
        /// `iss`: who issued the token.
        package var issuer: String?
        /// `sub`: whom the token is about (usually the user id).
        package var subject: String?
        /// `exp`: when the token expires (NumericDate, seconds since 1970, RFC 7519 §4.1.4).
        package var expiration: Date?
        /// `nbf`: not valid before.
        package var notBefore: Date?
        /// `iat`: when it was issued.
        package var issuedAt: Date?
        /// `jti`: the token's unique id.
        package var id: String?
    }

    private struct Payload: Decodable {
        var iss: String?
        var sub: String?
        var exp: Double?
        var nbf: Double?
        var iat: Double?
        var jti: String?
    }

    /// The claims of a compact-serialised JWT (`header.payload.signature`, RFC 7515 §7.1).
    ///
    /// - Parameter token: The token text.
    /// - Returns: `nil` when `token` is not three dot-separated parts whose middle part is
    ///   base64url (RFC 4648 §5, unpadded) JSON with well-typed registered claims.
    package static func claims(of token: String) -> Claims? {
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, let json = base64URLDecoded(parts[1]),
            let payload = try? JSONDecoder().decode(Payload.self, from: json)
        else { return nil }
        func date(_ seconds: Double?) -> Date? {
            seconds.flatMap { $0.isFinite ? Date(timeIntervalSince1970: $0) : nil }
        }
        return Claims(
            issuer: payload.iss, subject: payload.sub, expiration: date(payload.exp),
            notBefore: date(payload.nbf), issuedAt: date(payload.iat), id: payload.jti)
    }

    /// The token's `exp` claim, or `nil` when it has none or is not a readable JWT.
    package static func expirationDate(of token: String) -> Date? {
        claims(of: token)?.expiration
    }

    /// Decodes unpadded base64url (RFC 4648 §5); `nil` on any character outside its alphabet.
    static func base64URLDecoded(_ text: Substring) -> Data? {
        guard !text.isEmpty, text.utf8.count <= 64 * 1024 else { return nil }
        var base64 = ""
        base64.reserveCapacity(text.utf8.count + 3)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "A"..."Z", "a"..."z", "0"..."9": base64.unicodeScalars.append(scalar)
            case "-": base64.append("+")
            case "_": base64.append("/")
            default: return nil
            }
        }
        let remainder = base64.utf8.count % 4
        if remainder == 1 { return nil }
        if remainder > 0 { base64 += String(repeating: "=", count: 4 - remainder) }
        return Data(base64Encoded: base64)
    }
}
