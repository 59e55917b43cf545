import Courier
import Foundation

/// A PKCE proof key (RFC 7636): the secret `code_verifier` kept by the app and the
/// `code_challenge` sent with the authorization request, `BASE64URL(SHA256(ASCII(code_verifier)))`
/// (method `S256`, §4.2).
package struct ProofKey: Sendable, Hashable {
    /// The verifier: 43–128 characters of `[A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~"` (§4.1).
    package let verifier: String

    /// A verifier from 32 cryptographically random bytes, base64url-encoded without padding (43
    /// characters, 256 bits of entropy, as RFC 7636 §4.1 recommends).
    package static func random() -> ProofKey {
        ProofKey(uncheckedVerifier: base64URL(randomBytes(32)))
    }

    /// `count` bytes from the system's cryptographic random source (`SystemRandomNumberGenerator`:
    /// `arc4random` on Apple platforms, `getrandom` on Linux).
    package static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 7)
        while bytes.count < count {
            let word: UInt64 = generator.next()
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: word >> UInt64(shift)))
            }
        }
        return Array(bytes.prefix(count))
    }

    /// A given verifier, or `nil` when it breaks RFC 7636 §4.1 (length or characters).
    package init?(verifier: String) {
        guard Self.isValidVerifier(verifier) else { return nil }
        self.verifier = verifier
    }

    private init(uncheckedVerifier: String) {
        verifier = uncheckedVerifier
    }

    /// The `S256` challenge: `BASE64URL(SHA256(ASCII(code_verifier)))` (RFC 7636 §4.2).
    package var challenge: String {
        Self.base64URL(SHA256.hash(Array(verifier.utf8)))
    }

    /// The challenge method sent as `code_challenge_method`.
    package static let method = "S256"

    /// Whether `text` is 43–128 characters of the unreserved set (RFC 7636 §4.1).
    package static func isValidVerifier(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (43...128).contains(bytes.count) else { return false }
        return bytes.allSatisfy { $0.isASCIIAlphanumeric || "-._~".utf8.contains($0) }
    }

    /// Base64url without padding (RFC 4648 §5, RFC 7636 Appendix A).
    package static func base64URL(_ bytes: [UInt8]) -> String {
        var text = Data(bytes).base64EncodedString()
        text = text.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        while text.hasSuffix("=") { text.removeLast() }
        return text
    }
}
