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
    package init(digestBytes: [UInt8]) {
        digest = digestBytes
    }

    /// The base64 form, e.g. `n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM=`.
    public var base64: String { Data(digest).base64EncodedString() }

    /// ``base64``.
    public var description: String { base64 }
}

extension SPKIPin {
    /// The pin of an X.509 certificate's key: SHA-256 of the DER `subjectPublicKeyInfo` inside
    /// the certificate's `tbsCertificate` (RFC 5280 §4.1), the same digest a pin in a
    /// ``PinningPolicy`` names. `nil` when `certificate` is not DER the walk understands.
    package init?(certificateDER certificate: [UInt8]) {
        guard let spki = Self.subjectPublicKeyInfo(inCertificate: certificate) else { return nil }
        self.init(subjectPublicKeyInfo: spki)
    }

    /// The encoded `subjectPublicKeyInfo` element of a DER certificate: Certificate ::= SEQUENCE {
    /// tbsCertificate SEQUENCE { [0] version OPTIONAL, serialNumber, signature, issuer, validity,
    /// subject, subjectPublicKeyInfo, … }, … }.
    static func subjectPublicKeyInfo(inCertificate der: [UInt8]) -> ArraySlice<UInt8>? {
        guard let certificate = element(der, at: 0), der[certificate.start] == 0x30,
            let tbs = element(der, at: certificate.contents), der[tbs.start] == 0x30
        else { return nil }
        var offset = tbs.contents
        if offset < der.count, der[offset] == 0xA0 {  // [0] EXPLICIT version
            guard let version = element(der, at: offset) else { return nil }
            offset = version.end
        }
        // serialNumber, signature, issuer, validity, subject
        for _ in 0..<5 {
            guard let skipped = element(der, at: offset) else { return nil }
            offset = skipped.end
        }
        guard let spki = element(der, at: offset), der[spki.start] == 0x30, spki.end <= tbs.end else { return nil }
        return der[spki.start..<spki.end]
    }

    /// The DER element starting at `offset`: its first byte, where its contents start, and its end.
    private static func element(_ der: [UInt8], at offset: Int) -> (start: Int, contents: Int, end: Int)? {
        guard offset + 2 <= der.count else { return nil }
        var index = offset + 1
        let first = Int(der[index])
        index += 1
        var length = first
        if first & 0x80 != 0 {
            let count = first & 0x7F
            guard count >= 1, count <= 4, index + count <= der.count else { return nil }
            length = 0
            for byte in der[index..<(index + count)] { length = length << 8 | Int(byte) }
            index += count
        }
        guard length >= 0, index + length <= der.count else { return nil }
        return (offset, index, index + length)
    }
}
