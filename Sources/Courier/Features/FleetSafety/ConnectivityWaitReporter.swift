/// Reports a call's waits for the network to the call: the ``NetworkEvent/Kind/waitingForConnectivity``
/// and ``NetworkEvent/Kind/connectivityWaitEnded(networkReturned:duration:)`` events, a
/// ``ConnectivityWait`` in ``RequestContext/connectivityWaits``, and `callIsWaiting` on the
/// ``ConnectivityWaiting`` monitor the call's ``RetryInterceptor`` was given (which then reports
/// `ConnectivityStatus.waitingForConnectivity`).
///
/// Two places wait: ``RetryInterceptor`` (a read with ``RetryPolicy/waitsForConnectivity`` that
/// failed offline) and URLSession itself (`taskIsWaitingForConnectivity`, Apple platforms with
/// `URLSessionConfiguration.waitsForConnectivity`). Both report through this one value, so an app
/// sees the same events and status whichever waited.
package struct ConnectivityWaitReporter: Sendable {
    private let context: RequestContext

    /// Reports into `context`.
    package init(context: RequestContext) { self.context = context }

    /// The call began to wait.
    package func waitBegan() {
        context[ConnectivityMonitorKey.self]?.callIsWaiting(true)
        context.emit(.waitingForConnectivity)
    }

    /// The wait ended after `duration`; `networkReturned` is `false` when the deadline, a failure or
    /// a cancellation ended it.
    package func waitEnded(after duration: Duration, networkReturned: Bool) {
        context[ConnectivityMonitorKey.self]?.callIsWaiting(false)
        context.update(ConnectivityWaitsKey.self, default: []) {
            $0.append(ConnectivityWait(duration: duration, networkReturned: networkReturned))
        }
        context.emit(.connectivityWaitEnded(networkReturned: networkReturned, duration: duration))
    }
}

/// The context slot of the connectivity monitor the call's ``RetryInterceptor`` was given, so a
/// wait the transport reports reaches the same monitor.
package enum ConnectivityMonitorKey: RequestContextKey {
    package typealias Value = any ConnectivityWaiting
}
