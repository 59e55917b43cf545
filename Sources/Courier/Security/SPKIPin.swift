import Foundation

/// One RFC 7469 pin: the SHA-256 digest of a certificate's DER SubjectPublicKeyInfo, written in
/// base64 (`pin-sha256`, RFC 7469 §2.4). Pinning the key rather than the certificate survives
/// certificate renewal with the same key.
///
/// Compute one from a certificate or key with OpenSSL:
/// ```sh
/// openssl x509 -in cert.pem -pubkey -noout | openssl pkey -pubin -outform DER \
///   | openssl dgst -sha256 -binary | base64
/// ```
public struct SPKIPin: Sendable, Hashable, CustomStringConvertible {
    /// The 32-byte SHA-256 digest.
    package let digest: [UInt8]

    /// Parses a base64 pin, with or without the `sha256/` prefix some tools print.
    /// - Throws: ``PinningConfigurationError/invalidPin(host:pin:)`` (with an empty host) when it is
    ///   not base64 of exactly 32 bytes.
    public init(base64 text: String) throws {
        var value = text.trimmingCharacters(in: .whitespacesAndNewlines)  // `openssl … | base64` ends with a newline
        if value.lowercased().hasPrefix("sha256/") { value.removeFirst("sha256/".count) }
        guard let data = Data(base64Encoded: value), data.count == SHA256.digestLength else {
            throw PinningConfigurationError.invalidPin(host: "", pin: text)
        }
        digest = Array(data)
    }

    /// The pin of a DER-encoded SubjectPublicKeyInfo (as `openssl pkey -pubout -outform DER` writes it).
    public init(subjectPublicKeyInfo der: some Sequence<UInt8>) {
        digest = SHA256.hash(der)
    }

    /// The pin of a bare public key as `SecKeyCopyExternalRepresentation` returns it: PKCS#1
    /// `RSAPublicKey` DER for RSA, the uncompressed point `04 || X || Y` for EC.
    public init(publicKey: some Collection<UInt8>, algorithm: PublicKeyAlgorithm) {
        digest = SubjectPublicKeyInfo.sha256(key: publicKey, algorithm: algorithm)
    }

    /// Wraps a digest Courier computed itself (always 32 bytes).
    init(digestBytes: [UInt8]) {
        digest = digestBytes
    }

    /// The base64 form, e.g. `n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM=`.
    public var base64: String { Data(digest).base64EncodedString() }

    /// ``base64``.
    public var description: String { base64 }
}
