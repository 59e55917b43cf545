import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One retry that ``RetryInterceptor`` decided on: why, how long it waited and where the wait
/// came from. Stored in the call's ``RequestContext`` under `RetryRecordsKey` so metrics, logs
/// and tests can read the delays without timing anything.
public struct RetryRecord: Sendable, Hashable, CustomStringConvertible {
    /// What made the previous attempt worth repeating.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// A response with a retryable status, e.g. 503.
        case status(Int)
        /// A transport failure, e.g. `URLError.networkConnectionLost`.
        case transport(URLError.Code)
        /// Any other failure: a ``RetryableError`` (e.g. from a validator), or one a
        /// ``RetryDecider`` chose to retry.
        case other(String)

        public var description: String {
            switch self {
            case .status(let code): return "HTTP \(code)"
            case .transport(let code): return "URLError \(code.rawValue)"
            case .other(let text): return text
            }
        }
    }

    /// Where the delay came from.
    public enum DelaySource: Sendable, Hashable {
        /// The server's `Retry-After` header (RFC 9110 §10.2.3), at most ``RetryPolicy/maxRetryAfter``.
        case retryAfter
        /// The policy's exponential backoff with jitter.
        case backoff
        /// A ``RetryDecider``'s own wait (never shorter than the server's `Retry-After`).
        case decider
    }

    /// Index of this retry: 0 for the first retry (the second attempt).
    public var retry: Int
    /// Why the previous attempt is repeated.
    public var reason: Reason
    /// The wait before the retry.
    public var delay: Duration
    /// Whether ``delay`` came from `Retry-After` or from the backoff.
    public var delaySource: DelaySource

    public var description: String {
        let source: String
        switch delaySource {
        case .retryAfter: source = "Retry-After"
        case .backoff: source = "backoff"
        case .decider: source = "decider"
        }
        return "retry \(retry + 1) after \(reason), waiting \(delay) (\(source))"
    }
}

/// The context slot holding the call's ``RetryRecord``s in order, written by ``RetryInterceptor``
/// when each wait starts.
package enum RetryRecordsKey: RequestContextKey {
    package typealias Value = [RetryRecord]
}

extension RequestContext {
    /// The retries ``RetryInterceptor`` decided on so far (each recorded when its wait starts), in
    /// order; empty when none. After the call, `retryRecords.count` is the number of retries it
    /// took, and each record says why, how long it waited and whether the wait came from
    /// `Retry-After` (RFC 9110 §10.2.3) or the backoff.
    public var retryRecords: [RetryRecord] { self[RetryRecordsKey.self] ?? [] }

    /// The waits of ``retryRecords``, in order — exactly, so a test can assert the delay that a
    /// `Retry-After` produced without timing anything.
    public var retryDelays: [Duration] { retryRecords.map(\.delay) }
}
