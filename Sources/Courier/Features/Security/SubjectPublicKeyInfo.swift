/// The public-key algorithms whose keys Courier can turn into a SubjectPublicKeyInfo for pinning:
/// the key types of WebPKI server certificates.
public enum PublicKeyAlgorithm: Sendable, Hashable, CustomStringConvertible {
    /// RSA of any size (2048, 3072, 4096 bits…); `rsaEncryption`, RFC 3279 §2.3.1.
    case rsa
    /// ECDSA on NIST P-256 (`secp256r1`), RFC 5480 §2.1.1.
    case ecP256
    /// ECDSA on NIST P-384 (`secp384r1`).
    case ecP384
    /// ECDSA on NIST P-521 (`secp521r1`).
    case ecP521

    /// `RSA`, `EC P-256`, `EC P-384` or `EC P-521`.
    public var description: String {
        switch self {
        case .rsa: return "RSA"
        case .ecP256: return "EC P-256"
        case .ecP384: return "EC P-384"
        case .ecP521: return "EC P-521"
        }
    }
}

/// DER encoding of an X.509 SubjectPublicKeyInfo (RFC 5280 §4.1.2.7) — the structure an RFC 7469
/// pin hashes — rebuilt from the bare key bytes Apple's `SecKeyCopyExternalRepresentation`
/// returns:
///
/// ```
/// SubjectPublicKeyInfo ::= SEQUENCE {
///     algorithm         AlgorithmIdentifier,   -- rsaEncryption + NULL, or id-ecPublicKey + curve
///     subjectPublicKey  BIT STRING }           -- 0 unused bits, then the key bytes
/// ```
/// For RSA the key bytes are the PKCS#1 `RSAPublicKey` DER (RFC 8017 §A.1.1); for EC they are the
/// uncompressed point `04 || X || Y` (SEC 1 §2.3.3). The result is byte-identical to what
/// `openssl … -pubout -outform DER` prints, so pins computed with OpenSSL match.
enum SubjectPublicKeyInfo {
    /// The DER SubjectPublicKeyInfo for `key`.
    static func der(key: some Collection<UInt8>, algorithm: PublicKeyAlgorithm) -> [UInt8] {
        let algorithmIdentifier = sequence(algorithmContents(algorithm))
        let bitString = tagged(0x03, [0x00] + Array(key))
        return sequence(algorithmIdentifier + bitString)
    }

    /// The RFC 7469 pin value: SHA-256 of the DER SubjectPublicKeyInfo.
    static func sha256(key: some Collection<UInt8>, algorithm: PublicKeyAlgorithm) -> [UInt8] {
        SHA256.hash(der(key: key, algorithm: algorithm))
    }

    /// The algorithm for a key of `bits` size and Security-framework type, or `nil` when Courier
    /// cannot pin it.
    static func algorithm(isRSA: Bool, isEC: Bool, bits: Int) -> PublicKeyAlgorithm? {
        if isRSA { return .rsa }
        guard isEC else { return nil }
        switch bits {
        case 256: return .ecP256
        case 384: return .ecP384
        case 521: return .ecP521
        default: return nil
        }
    }

    // OBJECT IDENTIFIER encodings (tag, length, contents).
    // 1.2.840.113549.1.1.1
    private static let rsaEncryption: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    private static let asn1Null: [UInt8] = [0x05, 0x00]
    private static let ecPublicKey: [UInt8] = [0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]  // 1.2.840.10045.2.1
    private static let secp256r1: [UInt8] = [0x06, 0x08, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]  // 1.2.840.10045.3.1.7
    private static let secp384r1: [UInt8] = [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x22]  // 1.3.132.0.34
    private static let secp521r1: [UInt8] = [0x06, 0x05, 0x2B, 0x81, 0x04, 0x00, 0x23]  // 1.3.132.0.35

    private static func algorithmContents(_ algorithm: PublicKeyAlgorithm) -> [UInt8] {
        switch algorithm {
        case .rsa: return rsaEncryption + asn1Null
        case .ecP256: return ecPublicKey + secp256r1
        case .ecP384: return ecPublicKey + secp384r1
        case .ecP521: return ecPublicKey + secp521r1
        }
    }

    private static func sequence(_ contents: [UInt8]) -> [UInt8] { tagged(0x30, contents) }

    /// Tag, DER definite length (X.690 §8.1.3), contents.
    private static func tagged(_ tag: UInt8, _ contents: [UInt8]) -> [UInt8] {
        [tag] + length(contents.count) + contents
    }

    private static func length(_ count: Int) -> [UInt8] {
        if count < 0x80 { return [UInt8(count)] }
        var bytes: [UInt8] = []
        var remaining = count
        while remaining > 0 {
            bytes.insert(UInt8(truncatingIfNeeded: remaining), at: 0)
            remaining >>= 8
        }
        return [0x80 | UInt8(bytes.count)] + bytes
    }
}
