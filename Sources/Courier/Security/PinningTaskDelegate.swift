#if canImport(Darwin)
import Foundation
import Security

/// The per-task URLSession delegate of ``PinningTransport`` on Apple platforms: answers
/// server-trust challenges with system trust plus pins, and forwards task metrics.
///
/// A session-level delegate would see every task of the session; a per-task delegate
/// (`data(for:delegate:)`, iOS 15+) lets the transport know which request a failure belongs to.
/// URLSession calls it for server-trust challenges only when the session's own delegate does not
/// implement `urlSession(_:didReceive:completionHandler:)`.
final class PinningTaskDelegate: NSObject, URLSessionTaskDelegate, Sendable {
    private let policy: PinningPolicy
    private let timings: TaskTimingsReporter?
    private let recordedFailure = Locked<PinningFailure?>(nil)

    init(policy: PinningPolicy, timings: TaskTimingsReporter?) {
        self.policy = policy
        self.timings = timings
    }

    /// The failure that made this delegate refuse a connection, if any.
    var failure: PinningFailure? { recordedFailure.current }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let space = challenge.protectionSpace
        guard space.authenticationMethod == NSURLAuthenticationMethodServerTrust,
            let trust = space.serverTrust,
            !policy.isBypassed, policy.pins(for: space.host) != nil
        else {
            completionHandler(.performDefaultHandling, nil)
            return
        }
        if let failure = ServerTrustEvaluation.evaluate(trust, host: space.host, policy: policy) {
            recordedFailure.set(failure)
            completionHandler(.cancelAuthenticationChallenge, nil)
        } else {
            completionHandler(.useCredential, URLCredential(trust: trust))
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        timings?.report(TaskTimings(metrics))
    }
}

/// System trust, then pins, for one `SecTrust` (Apple platforms).
enum ServerTrustEvaluation {
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
