import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension TransportSessionDelegate {
    /// The answer to a task's authentication challenge.
    ///
    /// - A client-certificate challenge (Apple) is answered with the host's ``ClientIdentity``
    ///   (see ``ClientCertificateProvider``); one that cannot be read cancels the challenge, and the
    ///   call fails with that `URLError(.clientCertificateRejected)`. Without an identity the
    ///   system's default handling applies (no certificate is sent).
    /// - A server-trust challenge (Apple) goes to the ``ServerTrustEvaluator`` with the task's pins;
    ///   a refused chain cancels the challenge, and the call fails with the recorded
    ///   ``PinningFailure`` instead of the cancellation.
    /// - An HTTP authentication challenge is never answered with a credential. Where it ends the
    ///   task (``TransportCapabilities/challengeEndsTask``) the call first gets the 401 that came
    ///   with it; elsewhere default handling returns the 401.
    func answer(
        _ challenge: URLAuthenticationChallenge, taskID id: Int
    ) -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        let identity = clientIdentities[HostPins.normalise(challenge.protectionSpace.host)]
        if let decision = clientCertificates.decision(for: challenge, identity: identity) {
            switch decision {
            case .present(let credential):
                return (.useCredential, credential)
            case .refused(let failure):
                taskOptions.withLock { $0[id, default: TaskOptions()].clientCertificateFailure = failure }
                return (.cancelAuthenticationChallenge, nil)
            }
        }
        let pinning = taskOptions.withLock { $0[id]?.pinning }
        if let decision = serverTrust.decision(for: challenge, policy: pinning) {
            switch decision {
            case .defaultHandling:
                return (.performDefaultHandling, nil)
            case .trusted(let credential):
                return (.useCredential, credential)
            case .refused(let failure):
                taskOptions.withLock { $0[id, default: TaskOptions()].pinningFailure = failure }
                return (.cancelAuthenticationChallenge, nil)
            }
        }
        guard capabilities.challengeEndsTask else { return (.performDefaultHandling, nil) }
        // swift-corelibs-foundation raises the challenge once the whole 401 has arrived; every
        // disposition but a credential then cancels the task, so the call gets the 401 first.
        if let failure = challenge.failureResponse as? HTTPURLResponse {
            if streams.withLock({ $0[id] != nil }) {
                deliverHead(id, failure)
                completeStreamed(id, error: nil, response: failure)
            } else {
                finish(id) { .success(HTTPResponse(failure, body: $0)) }
            }
        }
        return (.cancelAuthenticationChallenge, nil)
    }
}
