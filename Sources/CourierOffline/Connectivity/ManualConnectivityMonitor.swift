import Foundation
import Courier

/// A ``ConnectivityMonitor`` whose status the app sets: for tests, previews, and for combining
/// other signals (a realtime client's state) by hand.
public final class ManualConnectivityMonitor: ConnectivityMonitor {
    private let broadcaster: StatusBroadcaster

    /// Creates a monitor with `initial` status.
    public init(initial: ConnectivityStatus = .online) {
        broadcaster = StatusBroadcaster(initial: initial)
    }

    /// The latest status.
    public var status: ConnectivityStatus { broadcaster.status }

    /// The current status, then every change.
    public func statuses() -> AsyncStream<ConnectivityStatus> { broadcaster.stream() }

    /// Publishes `status` (no event when it equals the current one).
    public func set(_ status: ConnectivityStatus) { broadcaster.publish(status) }
}

extension ManualConnectivityMonitor: ConnectivityWaiting {
    /// Returns once the status is neither ``ConnectivityStatus/noInternet`` nor
    /// ``ConnectivityStatus/waitingForConnectivity`` (at once when it is neither now).
    public func waitForConnectivity() async { await broadcaster.waitForConnectivity() }

    /// While a call waits and the status is ``ConnectivityStatus/noInternet``, the status is
    /// ``ConnectivityStatus/waitingForConnectivity``.
    public func callIsWaiting(_ waiting: Bool) { broadcaster.callIsWaiting(waiting) }
}
