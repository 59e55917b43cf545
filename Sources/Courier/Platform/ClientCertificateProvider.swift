import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the session delegate does with a client-certificate challenge.
package enum ClientCertificateDecision {
    /// Answer with this credential (the identity's certificate and key).
    case present(URLCredential)
    /// The identity cannot be used (unreadable archive, wrong passphrase, a kind this platform
    /// cannot present): cancel, and fail the call with this error.
    case refused(URLError)
}

/// Answers client-certificate challenges (mutual TLS) with a ``ClientIdentity``: the one place
/// that touches `SecIdentity` (Apple: `SecIdentityCredentials`). On Linux, where URLSession raises
/// no such challenge and cannot present a certificate, the twin (`NoClientCertificates`) finds none;
/// ``URLSessionTransport`` refuses those requests itself
/// (``TransportCapabilities/presentsClientCertificates``).
package protocol ClientCertificateProvider: Sendable {
    /// The decision for `challenge` with `identity`, or `nil` when `challenge` is not a
    /// client-certificate challenge or no identity is configured for its host.
    func decision(for challenge: URLAuthenticationChallenge, identity: ClientIdentity?) -> ClientCertificateDecision?
}

/// The Linux twin of `SecIdentityCredentials`: FoundationNetworking raises no client-certificate
/// challenge, so no challenge is one.
struct NoClientCertificates: ClientCertificateProvider {
    func decision(for challenge: URLAuthenticationChallenge, identity: ClientIdentity?) -> ClientCertificateDecision? {
        nil
    }
}
