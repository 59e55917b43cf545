#if canImport(Network)
import Foundation
import Network
import Courier

/// A ``ConnectivityMonitor`` backed by Network framework's `NWPathMonitor` (Apple platforms).
///
/// Maps the path status: `satisfied` → ``ConnectivityStatus/online``, `requiresConnection` →
/// ``ConnectivityStatus/waitingForConnectivity``, `unsatisfied` → ``ConnectivityStatus/noInternet``.
/// ``isExpensive`` (cellular, personal hotspot) and ``isConstrained`` (Low Data Mode) are surfaced
/// so the app can defer large uploads. A satisfied path does not prove the backend is up: pair it
/// with ``OutcomeConnectivityMonitor`` for ``ConnectivityStatus/backendUnavailable``.
public final class PathConnectivityMonitor: ConnectivityMonitor, @unchecked Sendable {
    // @unchecked: `monitor` (not Sendable in every SDK) is only touched in init and deinit; the
    // handler writes through `broadcaster` and `flags`, which lock.
    private struct Flags: Sendable {
        var isExpensive = false
        var isConstrained = false
    }

    private let monitor: NWPathMonitor
    private let broadcaster = StatusBroadcaster(initial: .waitingForConnectivity)
    private let flags = Locked(Flags())

    /// Starts monitoring all interfaces (or only `interfaceType`) on a private queue.
    public init(requiredInterfaceType interfaceType: NWInterface.InterfaceType? = nil) {
        monitor = interfaceType.map { NWPathMonitor(requiredInterfaceType: $0) } ?? NWPathMonitor()
        monitor.pathUpdateHandler = { [broadcaster, flags] path in
            flags.set(Flags(isExpensive: path.isExpensive, isConstrained: path.isConstrained))
            broadcaster.publish(Self.status(of: path.status))
        }
        monitor.start(queue: DispatchQueue(label: "courier.offline.path-monitor"))
    }

    deinit { monitor.cancel() }

    /// The latest status (``ConnectivityStatus/waitingForConnectivity`` until the first path update).
    public var status: ConnectivityStatus { broadcaster.status }

    /// The current status, then every change.
    public func statuses() -> AsyncStream<ConnectivityStatus> { broadcaster.stream() }

    /// Whether the current path is expensive (cellular or a personal hotspot).
    public var isExpensive: Bool { flags.current.isExpensive }

    /// Whether the current path is constrained (Low Data Mode).
    public var isConstrained: Bool { flags.current.isConstrained }

    static func status(of status: NWPath.Status) -> ConnectivityStatus {
        switch status {
        case .satisfied: return .online
        case .requiresConnection: return .waitingForConnectivity
        case .unsatisfied: return .noInternet
        @unknown default: return .noInternet
        }
    }
}
#endif
