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

    /// ``FleetHostState/refundRetry(withdrawnAt:)`` for `host`.
    package func refundRetry(to host: String, withdrawnAt time: Duration) {
        guard budget != nil else { return }
        withHost(host) { $0.refundRetry(withdrawnAt: time) }
    }

    /// ``FleetHostState/record(_:isProbe:at:random:)`` for `host`.
    package func record(
        _ outcome: CircuitBreakerState.Outcome, of host: String, isProbe: Bool, at now: Duration,
        random: @autoclosure () -> Double
    ) {
        guard breaker != nil else { return }
        withHost(host) { $0.record(outcome, isProbe: isProbe, at: now, random: random()) }
    }

    /// Pauses every attempt to `host` for `wait` from `now` (a server's `Retry-After`), at most
    /// ``CircuitBreaker/maximumPause``.
    package func pause(_ host: String, for wait: Duration, from now: Duration) {
        guard let breaker else { return }
        let until = now + min(wait, breaker.maximumPause)
        withHost(host) { $0.breaker?.pause(until: until) }
    }

    private func withHost<R>(_ host: String, _ body: (inout FleetHostState) -> R) -> R {
        hosts.withLock { hosts in
            body(&hosts[host, default: FleetHostState(budget: budget, breaker: breaker)])
        }
    }

    /// The key of a request's host: `host:port` (scheme default port when none is given).
    package static func hostKey(of url: URL?) -> String {
        guard let url else { return "" }
        if let key = plainHostKey(of: url.absoluteString) { return key }
        guard let host = url.host?.lowercased() else { return "" }
        return url.port.map { "\(host):\($0)" } ?? host
    }

    /// ``hostKey(of:)`` read straight off the text of an `http(s)` URL whose authority is a plain
    /// ASCII host with an optional port (RFC 3986 §3.2): one scan instead of URL's host parsing,
    /// per call. `nil` for anything else (user info, IP literals, percent-encoding, non-ASCII),
    /// which the URL parses.
    static func plainHostKey(of text: String) -> String? {
        var text = text
        return text.withUTF8 { plainHostKey(bytes: $0) }
    }

    /// ``plainHostKey(of:)`` over the URL's UTF-8 bytes. The key is the authority's own text,
    /// lowercased: a port with a leading zero (which `URL` reads as a number) or above 65535 is
    /// left to the URL.
    private static func plainHostKey(bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let start: Int
        if hasPrefix(bytes, "https://") {
            start = 8
        } else if hasPrefix(bytes, "http://") {
            start = 7
        } else {
            return nil
        }
        var index = start
        var colon: Int?
        var port = 0
        var hasUppercase = false
        scan: while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"): break scan
            case UInt8(ascii: "0")...UInt8(ascii: "9") where colon != nil:
                guard port != 0 || index == (colon ?? 0) + 1, index - (colon ?? 0) <= 5 else { return nil }
                port = port * 10 + Int(byte - UInt8(ascii: "0"))
            case _ where colon != nil: return nil
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): hasUppercase = true
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"),
                UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                break
            case UInt8(ascii: ":"): colon = index
            default: return nil  // user info, an IP literal, percent-encoding, non-ASCII
            }
            index += 1
        }
        // A host, and after a colon at least one digit of a port that fits 16 bits.
        guard (colon ?? index) > start, colon.map({ index > $0 + 1 }) ?? true, port <= 65_535 else { return nil }
        let authority = UnsafeBufferPointer(rebasing: bytes[start..<index])
        guard hasUppercase else { return String(decoding: authority, as: UTF8.self) }
        return String(
            decoding: authority.map { (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Whether `bytes` start with the ASCII text `prefix`.
    private static func hasPrefix(_ bytes: UnsafeBufferPointer<UInt8>, _ prefix: StaticString) -> Bool {
        prefix.withUTF8Buffer { prefix in
            bytes.count >= prefix.count && zip(bytes, prefix).allSatisfy { $0 == $1 }
        }
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
            case .cancelled, .timedOut(nil), .invalidRequest, .missingInterceptor, .signedOut, .tokenStoreFailed,
                .backendUnavailable:
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

    /// Failures that say the host (not the device's network) is in trouble: the transient
    /// failures retries repeat (Linux's `badServerResponse` for a lost connection included),
    /// except a failed name resolution, which is the device's network.
    private static let transientCodes = RetryPolicy.transientErrorCodes.subtracting([.cannotFindHost, .dnsLookupFailed])
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

    /// Gives back to the budget a retry planned at `time` (``refusalOfRetry(at:)``) that was
    /// never sent.
    package mutating func refundRetry(withdrawnAt time: Duration) {
        ledger?.refund(withdrawnAt: time)
    }

    /// Records what an attempt said about the host.
    package mutating func record(
        _ outcome: CircuitBreakerState.Outcome, isProbe: Bool, at now: Duration, random: @autoclosure () -> Double
    ) {
        breaker?.record(outcome, isProbe: isProbe, at: now, random: random())
    }
}
