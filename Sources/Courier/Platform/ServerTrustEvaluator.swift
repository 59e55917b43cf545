import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the session delegate does with a server-trust challenge of a pinned call.
package enum ServerTrustDecision {
    /// Let URLSession evaluate trust as usual (the host is not pinned, or pins are bypassed).
    case defaultHandling
    /// System trust and the pins accepted the chain: answer with this credential.
    case trusted(URLCredential)
    /// The chain was refused: cancel the challenge, and fail the call with this reason.
    case refused(PinningFailure)
}

/// Checks server-trust challenges against a ``PinningPolicy``: the one place that touches the
/// platform's trust objects (Apple: `SecTrust`, see `SecTrustEvaluator`).
///
/// The session delegate asks the evaluator about every task-level challenge; on Linux, where
/// URLSession raises no server-trust challenge, the twin (`NoServerTrustEvaluator`) never finds one.
package protocol ServerTrustEvaluator: Sendable {
    /// The decision for `challenge` under `policy`, or `nil` when `challenge` is not a server-trust
    /// challenge (an HTTP authentication challenge, a client certificate request).
    func decision(for challenge: URLAuthenticationChallenge, policy: PinningPolicy?) -> ServerTrustDecision?
}

extension PinningPolicy {
    /// Whether `host`'s connections must pass the pins (pinned, and pins not bypassed).
    package func enforces(host: String) -> Bool {
        !isBypassed && pins(for: host) != nil
    }
}
