import Foundation

/// A transport that can say whether it enforces a ``PinningPolicy`` on every connection it makes.
///
/// The client asks before each call of an environment with ``APIEnvironment/pins``: a call to a
/// pinned host goes out only through a transport that enforces exactly those pins (a
/// ``PinningTransport`` with them, a `CurlTransport` whose `Configuration.pinning` is them, a
/// wrapper around one of these) or one that connects to no server at all (test transports).
/// Anything else — a transport `configure` installed without the pins — refuses the call with
/// ``PinningFailure/transportIgnoresPins(host:)``: fail closed, never silently unpinned.
package protocol PinEnforcing: Transport {
    /// Whether every connection this transport makes is checked against `policy`; `true` also for
    /// a transport that never connects to a server.
    func enforces(_ policy: PinningPolicy) -> Bool
}

extension PinningPolicy {
    /// Whether `transport` enforces this policy (see ``PinEnforcing``); `false` for a transport
    /// that does not say.
    package func isEnforced(by transport: any Transport) -> Bool {
        (transport as? any PinEnforcing)?.enforces(self) ?? false
    }
}

extension PinningTransport: PinEnforcing {
    /// Whether `policy` is the policy this transport enforces.
    package func enforces(_ policy: PinningPolicy) -> Bool { policy == self.policy }
}

extension CookieStoringTransport: PinEnforcing {
    /// Whether the base transport, which makes the connections, enforces `policy`.
    package func enforces(_ policy: PinningPolicy) -> Bool { policy.isEnforced(by: base) }
}
