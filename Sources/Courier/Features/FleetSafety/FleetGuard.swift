import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One client's ``RetryBudget`` and ``CircuitBreaker`` state, per host: the shared memory of all
/// calls through one ``RetryInterceptor`` (and its copies). Thread-safe; the decisions themselves
/// are the pure values ``RetryBudgetLedger`` and ``CircuitBreakerState``.
package final class FleetGuard: Sendable {
    package let budget: RetryBudget?
    package let breaker: CircuitBreaker?
    private let hosts = Locked<[String: FleetHostState]>([:])

    package init(budget: RetryBudget?, breaker: CircuitBreaker?) {
        self.budget = budget
        self.breaker = breaker
    }

    /// Whether the guard does anything at all.
    package var isActive: Bool { budget != nil || breaker != nil }

    /// ``FleetHostState/admit(isRetry:at:)`` for `host`.
    package func admit(_ host: String, isRetry: Bool, at now: Duration) -> CircuitBreakerState.Admission {
        withHost(host) { $0.admit(isRetry: isRetry, at: now) }
    }

    /// ``FleetHostState/refusalOfRetry(at:)`` for `host`.
    package func refusal(ofRetryTo host: String, at now: Duration) -> RetryRefusal? {
        withHost(host) { $0.refusalOfRetry(at: now) }
    }

    /// ``FleetHostState/record(_:isProbe:at:random:)`` for `host`.
    package func record(
        _ outcome: CircuitBreakerState.Outcome, of host: String, isProbe: Bool, at now: Duration,
        random: @autoclosure () -> Double
    ) {
        guard breaker != nil else { return }
        withHost(host) { $0.record(outcome, isProbe: isProbe, at: now, random: random()) }
    }

    /// Pauses every attempt to `host` until `until` (a server's `Retry-After`).
    package func pause(_ host: String, until: Duration) {
        guard breaker != nil else { return }
        withHost(host) { $0.breaker?.pause(until: until) }
    }

    private func withHost<R>(_ host: String, _ body: (inout FleetHostState) -> R) -> R {
        hosts.withLock { hosts in
            body(&hosts[host, default: FleetHostState(budget: budget, breaker: breaker)])
        }
    }

    /// The key of a request's host: `host:port` (scheme default port when none is given).
    package static func hostKey(of url: URL?) -> String {
        guard let url, let host = url.host?.lowercased() else { return "" }
        return url.port.map { "\(host):\($0)" } ?? host
    }

    /// What an attempt's outcome says about its host, for the breaker.
    package static func outcome(of result: Result<HTTPResponse, any Error>) -> CircuitBreakerState.Outcome {
        switch result {
        case .success(let response):
            return isTransientStatus(response.statusCode) ? .failure : .success
        case .failure(let error):
            return outcome(of: error)
        }
    }

    private static func outcome(of error: any Error) -> CircuitBreakerState.Outcome {
        switch error {
        case let error as URLError:
            return transientCodes.contains(error.code) ? .failure : .neutral
        case let error as NetworkError:
            switch error {
            case .transport(let underlying), .timedOut(let underlying?), .offline(let underlying):
                return transientCodes.contains(underlying.code) ? .failure : .neutral
            case .cancelled, .timedOut(nil), .invalidRequest, .missingInterceptor, .signedOut, .backendUnavailable:
                return .neutral
            default:
                if let status = error.statusCode { return isTransientStatus(status) ? .failure : .success }
                return .neutral
            }
        default:
            return .neutral
        }
    }

    private static func isTransientStatus(_ status: Int) -> Bool { [500, 502, 503, 504].contains(status) }

    /// Failures that say the host (not the device's network) is in trouble.
    private static let transientCodes: Set<URLError.Code> = {
        var codes: Set<URLError.Code> = [.timedOut, .networkConnectionLost, .cannotConnectToHost]
        #if canImport(FoundationNetworking)
        codes.insert(.badServerResponse)
        #endif
        return codes
    }()
}

/// One host's budget and breaker as seen by one client: the decisions ``RetryInterceptor`` makes
/// (through ``FleetGuard``) and the fleet simulation makes for each simulated client — the same
/// code. A pure value; `now` is any monotonic offset.
package struct FleetHostState: Sendable, Hashable {
    package var ledger: RetryBudgetLedger?
    package var breaker: CircuitBreakerState?

    package init(budget: RetryBudget?, breaker: CircuitBreaker?) {
        ledger = budget.map(RetryBudgetLedger.init)
        self.breaker = breaker.map(CircuitBreakerState.init)
    }

    /// Whether an attempt may be sent at `now`; a first attempt that is sent deposits into the
    /// budget.
    package mutating func admit(isRetry: Bool, at now: Duration) -> CircuitBreakerState.Admission {
        let admission = breaker?.admit(at: now, isRetry: isRetry) ?? .allowed
        if !isRetry, admission == .allowed || admission == .probe { ledger?.deposit(at: now) }
        return admission
    }

    /// `nil` when a retry may be planned at `now` (withdrawing it from the budget), else why not:
    /// the breaker is not closed, or the budget has no balance.
    package mutating func refusalOfRetry(at now: Duration) -> RetryRefusal? {
        if let breaker, breaker.phase != .closed { return .circuitOpen }
        if ledger?.withdraw(at: now) == false { return .budgetExhausted }
        return nil
    }

    /// Records what an attempt said about the host.
    package mutating func record(
        _ outcome: CircuitBreakerState.Outcome, isProbe: Bool, at now: Duration, random: @autoclosure () -> Double
    ) {
        breaker?.record(outcome, isProbe: isProbe, at: now, random: random())
    }
}
