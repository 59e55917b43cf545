/// Why ``RetryInterceptor`` did not send a retry that the endpoint's ``RetryPolicy`` allowed:
/// the call ended with its last response or error instead. Read it from
/// ``RequestContext/retryRefusal``; logs and metrics events carry it too.
public enum RetryRefusal: String, Sendable, Hashable, CustomStringConvertible {
    /// The client's ``RetryBudget`` for the host had no balance.
    case budgetExhausted
    /// The host's ``CircuitBreaker`` opened (the failures of this or other calls).
    case circuitOpen

    /// "retry budget exhausted" or "circuit open".
    public var description: String {
        switch self {
        case .budgetExhausted: return "retry budget exhausted"
        case .circuitOpen: return "circuit open"
        }
    }
}

/// The context slot of the call's ``RetryRefusal``.
package enum RetryRefusalKey: RequestContextKey {
    package typealias Value = RetryRefusal
}

extension RequestContext {
    /// Why the call's last retry was not sent although its ``RetryPolicy`` allowed it; `nil` when
    /// nothing was refused.
    public var retryRefusal: RetryRefusal? { self[RetryRefusalKey.self] }
}

extension NetworkLogEntry {
    /// The entry with "(retry budget exhausted)" or "(circuit open)" added to its summary when a
    /// retry was refused.
    func noting(_ refusal: RetryRefusal?) -> NetworkLogEntry {
        guard let refusal else { return self }
        var entry = self
        entry.summary += " (\(refusal))"
        return entry
    }
}
