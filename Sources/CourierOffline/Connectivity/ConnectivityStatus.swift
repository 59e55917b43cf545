import Foundation
import Courier

/// What the app can tell the user about reaching its backend.
///
/// For UI ("You're offline", "Our servers are having trouble") and as a trigger for the
/// ``MutationQueue``; never a reason to hold a request back: a request is always attempted and
/// its own error says what happened.
public enum ConnectivityStatus: Sendable, Hashable, CustomStringConvertible {
    /// Requests reach the backend.
    case online
    /// The system has no usable path yet but expects one (Network framework's
    /// `requiresConnection`: a VPN or cellular connection being set up on demand).
    case waitingForConnectivity
    /// No network path: airplane mode, no Wi-Fi, DNS unreachable.
    case noInternet
    /// The network works but the backend does not: connections refused, or a run of 502/503/504.
    case backendUnavailable
    /// HTTP requests work but the app's realtime channel (WebSocket, SSE) is down.
    case realtimeDisconnected

    /// Whether HTTP requests are expected to reach the backend (``online`` or
    /// ``realtimeDisconnected``).
    public var isReachable: Bool { self == .online || self == .realtimeDisconnected }

    /// The case name, e.g. `backendUnavailable`.
    public var description: String {
        switch self {
        case .online: return "online"
        case .waitingForConnectivity: return "waitingForConnectivity"
        case .noInternet: return "noInternet"
        case .backendUnavailable: return "backendUnavailable"
        case .realtimeDisconnected: return "realtimeDisconnected"
        }
    }
}

/// A source of ``ConnectivityStatus`` updates.
public protocol ConnectivityMonitor: Sendable {
    /// The latest status.
    var status: ConnectivityStatus { get }
    /// The current status, then every change (consecutive duplicates are not repeated). The
    /// stream ends when the monitor is deallocated or the reader stops.
    func statuses() -> AsyncStream<ConnectivityStatus>
}

/// Fan-out of status changes to any number of `AsyncStream` readers; shared by the monitors.
final class StatusBroadcaster: Sendable {
    private struct State: Sendable {
        var status: ConnectivityStatus
        var continuations: [UUID: AsyncStream<ConnectivityStatus>.Continuation] = [:]
    }

    private let state: Locked<State>

    init(initial: ConnectivityStatus) { state = Locked(State(status: initial)) }

    deinit { for continuation in state.current.continuations.values { continuation.finish() } }

    var status: ConnectivityStatus { state.withLock { $0.status } }

    func stream() -> AsyncStream<ConnectivityStatus> {
        let (stream, continuation) = AsyncStream<ConnectivityStatus>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        state.withLock { state in
            state.continuations[id] = continuation
            continuation.yield(state.status)
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Publishes `status` when it differs from the current one. Returns whether it changed.
    @discardableResult
    func publish(_ status: ConnectivityStatus) -> Bool {
        state.withLock { state in
            guard state.status != status else { return false }
            state.status = status
            for continuation in state.continuations.values { continuation.yield(status) }
            return true
        }
    }
}
