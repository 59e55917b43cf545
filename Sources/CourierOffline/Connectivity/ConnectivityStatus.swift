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
    /// `requiresConnection`: a VPN or cellular connection being set up on demand), or the device
    /// is offline while calls wait for the network (`RetryPolicy.waitsForConnectivity`).
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
        var base: ConnectivityStatus
        var waitingCalls = 0
        var continuations: [UUID: AsyncStream<ConnectivityStatus>.Continuation] = [:]
    }

    private let state: Locked<State>

    init(initial: ConnectivityStatus) { state = Locked(State(base: initial)) }

    deinit { for continuation in state.current.continuations.values { continuation.finish() } }

    var status: ConnectivityStatus { state.withLock { Self.effective($0) } }

    /// The published status: ``ConnectivityStatus/waitingForConnectivity`` while the device has no
    /// network and calls wait for it.
    private static func effective(_ state: State) -> ConnectivityStatus {
        state.base == .noInternet && state.waitingCalls > 0 ? .waitingForConnectivity : state.base
    }

    func stream() -> AsyncStream<ConnectivityStatus> {
        let (stream, continuation) = AsyncStream<ConnectivityStatus>.makeStream(bufferingPolicy: .bufferingNewest(16))
        let id = UUID()
        state.withLock { state in
            state.continuations[id] = continuation
            continuation.yield(Self.effective(state))
        }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) }
        }
        return stream
    }

    /// Publishes `status` when it differs from the current one. Returns whether it changed.
    @discardableResult
    func publish(_ status: ConnectivityStatus) -> Bool {
        change { $0.base = status }
    }

    /// Counts a call that starts (`true`) or stops waiting for the network.
    func callIsWaiting(_ waiting: Bool) {
        change { $0.waitingCalls = max(0, $0.waitingCalls + (waiting ? 1 : -1)) }
    }

    /// Returns once the device has a network path (the status is neither no internet nor waiting).
    func waitForConnectivity() async {
        for await status in stream() where status != .noInternet && status != .waitingForConnectivity { return }
    }

    @discardableResult
    private func change(_ body: (inout State) -> Void) -> Bool {
        state.withLock { state in
            let before = Self.effective(state)
            body(&state)
            let after = Self.effective(state)
            guard before != after else { return false }
            for continuation in state.continuations.values { continuation.yield(after) }
            return true
        }
    }
}
