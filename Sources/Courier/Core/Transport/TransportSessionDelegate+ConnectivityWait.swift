import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// URLSession's own waits for the network, reported to the call
/// (``TransportCapabilities/reportsWaitingForConnectivity``).
///
/// On Apple platforms a session whose configuration has `waitsForConnectivity` keeps a task that
/// cannot reach the network waiting instead of failing it, and says so once through
/// `urlSession(_:taskIsWaitingForConnectivity:)` (the adapter in `Platform/` forwards it here). The
/// wait ends when the task sends its first body bytes or gets its response head (the network came
/// back) or completes without one (the deadline or a cancellation ended it). Each wait becomes a
/// ``NetworkEvent/Kind/waitingForConnectivity`` event, an ending event and a ``ConnectivityWait``
/// of the call — the same as a wait of ``RetryPolicy/waitsForConnectivity``.
extension TransportSessionDelegate {
    /// The task `id` waits for the network; a second report of the same wait does nothing.
    func taskIsWaitingForConnectivity(_ id: Int) {
        let reporter = taskOptions.withLock { options -> ConnectivityWaitReporter? in
            guard let reporter = options[id]?.connectivity, options[id]?.waitingSince == nil else { return nil }
            options[id]?.waitingSince = .now
            return reporter
        }
        reporter?.waitBegan()
    }

    /// The task `id` reached the network: a wait it was in ends with the network back.
    func connectivityReturned(_ id: Int) {
        let ended = taskOptions.withLock { options -> TaskOptions? in
            guard let current = options[id], current.waitingSince != nil else { return nil }
            options[id]?.waitingSince = nil
            return current
        }
        if let ended { Self.endConnectivityWait(ended, networkReturned: true) }
    }

    /// Ends the wait `options` records, if any.
    static func endConnectivityWait(_ options: TaskOptions, networkReturned: Bool) {
        guard let reporter = options.connectivity, let since = options.waitingSince else { return }
        reporter.waitEnded(after: .now - since, networkReturned: networkReturned)
    }
}
