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

    /// Refuses `url` when this policy pins its host: for requests about to go out through a
    /// transport that does not enforce the policy (the first URL of a call, each redirect, a
    /// token refresh).
    ///
    /// - Throws: A `URLError` carrying ``PinningFailure/transportIgnoresPins(host:)``.
    package func refuseUnenforced(_ url: URL?) throws {
        guard let host = url?.host, enforces(host: host) else { return }
        throw PinningFailure.transportIgnoresPins(host: HostPins.normalise(host)).urlError
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
