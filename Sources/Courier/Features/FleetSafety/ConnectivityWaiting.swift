/// Knows when the device's network comes back: what ``RetryInterceptor`` waits on before it tries
/// a read that failed because the device is offline once more (``RetryPolicy/waitsForConnectivity``),
/// as URLSession's `waitsForConnectivity` and Alamofire's offline retrier do.
///
/// `CourierOffline`'s connectivity monitors conform; while a call waits they report
/// `ConnectivityStatus.waitingForConnectivity`, so an app can show its offline banner without
/// guessing from errors.
public protocol ConnectivityWaiting: Sendable {
    /// Returns once the device has a usable network path — at once when it has one now. Returns
    /// early when the task is cancelled.
    func waitForConnectivity() async
    /// Called with `true` when a call starts waiting for the network and `false` when it stops.
    func callIsWaiting(_ waiting: Bool)
}

/// One wait of a call for the network (``RequestContext/connectivityWaits``).
public struct ConnectivityWait: Sendable, Hashable {
    /// How long the call waited.
    public var duration: Duration
    /// Whether the network came back within the call's deadline (then the call tried once more).
    public var networkReturned: Bool
}

/// The context slot of the call's ``ConnectivityWait``s.
package enum ConnectivityWaitsKey: RequestContextKey {
    package typealias Value = [ConnectivityWait]
}

extension RequestContext {
    /// The times the call waited for the network (``RetryPolicy/waitsForConnectivity``), in order;
    /// empty when it never did.
    public var connectivityWaits: [ConnectivityWait] { self[ConnectivityWaitsKey.self] ?? [] }
}
