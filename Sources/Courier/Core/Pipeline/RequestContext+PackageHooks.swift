import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RequestContext {
    /// Whether the call is safe by the API's own semantics (``CallTraits/isDeclaredSafe``).
    package var isDeclaredSafe: Bool { traits.isDeclaredSafe }

    /// The check for responses that reject the access token (``CallTraits/rejectsAccessToken``).
    package var rejectsAccessToken: (@Sendable (HTTPResponse) -> Bool)? { traits.rejectsAccessToken }

    /// The body options of a streamed call (``CallTraits/streaming``); `nil` for a buffered one.
    package var streaming: StreamingOptions? { traits.streaming }

    /// Where the transport reports this call's body bytes (``CallTraits/transferProgress``).
    package var transferProgress: TransferProgressReporter? { traits.transferProgress }

    /// Whether the request may be sent again — by a retry, a redirect that keeps the body or a
    /// resend after a token refresh: `false` once a one-shot body stream was sent.
    package var canResendBody: Bool {
        guard let stream = bodyStream else { return true }
        return stream.iterationBehavior == .multiple || attempt == 0
    }
}
