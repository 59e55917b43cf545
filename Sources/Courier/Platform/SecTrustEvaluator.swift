#if canImport(Security)
import Foundation
import Security

/// The Apple adapter of ``ServerTrustEvaluator``: system trust (`SecTrustEvaluateWithError`,
/// iOS 12+/macOS 10.14+), then the pins of the challenged host against every key of the evaluated
/// chain (`SecTrustCopyCertificateChain`, iOS 15+/macOS 12+; `SecCertificateCopyKey`, iOS 12+).
struct SecTrustEvaluator: ServerTrustEvaluator {
    func decision(for challenge: URLAuthenticationChallenge, policy: PinningPolicy?) -> ServerTrustDecision? {
        let space = challenge.protectionSpace
        guard space.authenticationMethod == NSURLAuthenticationMethodServerTrust else { return nil }
        guard let policy, policy.enforces(host: space.host), let trust = space.serverTrust else {
            return .defaultHandling
        }
        if let failure = Self.evaluate(trust, host: space.host, policy: policy) { return .refused(failure) }
        return .trusted(URLCredential(trust: trust))
    }

    /// Evaluates `trust` for `host`: `nil` when it is trusted by the system and satisfies the pins.
    static func evaluate(_ trust: SecTrust, host: String, policy: PinningPolicy) -> PinningFailure? {
        // 1. Normal trust: chain to a trusted root, validity dates, the SSL policy for this host name.
        SecTrustSetPolicies(trust, SecPolicyCreateSSL(true, host as CFString))
        var error: CFError?
        guard SecTrustEvaluateWithError(trust, &error) else {
            let reason = error.map { ($0 as Error).localizedDescription } ?? "trust evaluation failed"
            return .systemTrustFailed(host: HostPins.normalise(host), reason: reason)
        }
        // 2. Pins: some key in the evaluated chain must be pinned (RFC 7469 §2.6).
        return policy.evaluate(host: host, digests: spkiDigests(of: trust))
    }

    /// SHA-256 of the SubjectPublicKeyInfo of every certificate in the evaluated chain, leaf first.
    /// Certificates with keys Courier cannot encode are skipped (they cannot match a pin).
    static func spkiDigests(of trust: SecTrust) -> [[UInt8]] {
        let chain = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? []
        return chain.compactMap { certificate in
            guard let key = SecCertificateCopyKey(certificate) else { return nil }
            return spkiDigest(of: key)
        }
    }

    /// The pin digest of `key`: its external representation wrapped in the SubjectPublicKeyInfo
    /// header for its type and size, hashed.
    static func spkiDigest(of key: SecKey) -> [UInt8]? {
        guard let attributes = SecKeyCopyAttributes(key) as? [String: Any],
            let type = attributes[kSecAttrKeyType as String] as? String,
            let bits = attributes[kSecAttrKeySizeInBits as String] as? Int,
            let data = SecKeyCopyExternalRepresentation(key, nil) as Data?,
            let algorithm = SubjectPublicKeyInfo.algorithm(
                isRSA: type == (kSecAttrKeyTypeRSA as String),
                isEC: type == (kSecAttrKeyTypeECSECPrimeRandom as String),
                bits: bits)
        else { return nil }
        return SubjectPublicKeyInfo.sha256(key: data, algorithm: algorithm)
    }
}
#endif
