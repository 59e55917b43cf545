import Courier
import Foundation

// The test transports answer from scripts, fixtures or samples and connect to no server: no
// certificate to check, so an environment's pins never refuse their calls. A transport that
// wraps another enforces what the wrapped one enforces.

extension StubTransport: PinEnforcing {
    /// `true`: a stub connects to no server.
    package func enforces(_ policy: PinningPolicy) -> Bool { true }
}

extension ReplayTransport: PinEnforcing {
    /// `true`: a replay connects to no server.
    package func enforces(_ policy: PinningPolicy) -> Bool { true }
}

extension SampleTransport: PinEnforcing {
    /// `true`: samples connect to no server.
    package func enforces(_ policy: PinningPolicy) -> Bool { true }
}

extension ConditionedTransport: PinEnforcing {
    /// Whether the wrapped transport, which makes the connections, enforces `policy`.
    package func enforces(_ policy: PinningPolicy) -> Bool { policy.isEnforced(by: base) }
}
