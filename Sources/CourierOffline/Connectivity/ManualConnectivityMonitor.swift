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
