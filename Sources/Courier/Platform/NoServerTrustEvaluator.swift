import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The Linux twin of `SecTrustEvaluator`: URLSession from FoundationNetworking raises no
/// server-trust challenge (and `NSURLAuthenticationMethodServerTrust` is unavailable there), so no
/// challenge is one. ``PinningTransport`` refuses pinned hosts itself when
/// ``TransportCapabilities/raisesServerTrustChallenges`` is `false`.
struct NoServerTrustEvaluator: ServerTrustEvaluator {
    func decision(for challenge: URLAuthenticationChallenge, policy: PinningPolicy?) -> ServerTrustDecision? {
        nil
    }
}
