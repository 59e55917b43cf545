import Foundation

/// Receives a call's lifecycle events as they happen (Alamofire's `EventMonitor`, OkHttp's
/// `EventListener`): for tracing, an in-app network inspector or a test's assertions. Attach any
/// number with ``APIClient/Configuration/eventMonitors``; a client with none pays nothing for
/// them beyond one check per step.
///
/// ```swift
/// struct RetryTrace: NetworkEventMonitor {
///     let analytics: Analytics
///     func receive(_ event: NetworkEvent) {
///         if case .retryScheduled(let delay, let reason) = event.kind {
///             analytics.track("retry", ["path": event.pathTemplate, "reason": reason, "delay": "\(delay)"])
///         }
///     }
/// }
/// let traced = APIClient(environment: .production) { $0.eventMonitors = [RetryTrace(analytics: Analytics())] }
/// ```
///
/// Called synchronously on the call's task: keep ``receive(_:)`` cheap, thread-safe and
/// non-blocking (hand heavy work to your own queue or actor). Every URL in an event is redacted.
public protocol NetworkEventMonitor: Sendable {
    /// Handles one event.
    func receive(_ event: NetworkEvent)
}

/// One step of a call, as a ``NetworkEventMonitor`` sees it.
public struct NetworkEvent: Sendable {
    /// What happened. Later versions may add kinds: switch over it with a `default` branch.
    public enum Kind: Sendable {
        /// The client began the call.
        case callStarted
        /// The request was built; `url` is redacted by the client's ``Redactor``.
        case requestPrepared(url: String)
        /// An attempt reached the transport (1 for the first, 2 for the first retry…).
        case attemptStarted(attempt: Int)
        /// The transport reported the attempt's phase timings (DNS, connect, TLS…), where it
        /// measures them and an interceptor asked for them (``TransportReporter``).
        case taskTimings(TaskTimings)
        /// A response head arrived for the attempt (after redirects the pipeline followed).
        case responseHead(statusCode: Int, attempt: Int)
        /// The retry interceptor will send again after `delay`, for `reason`.
        case retryScheduled(delay: Duration, reason: String)
        /// The call waits for the device's network to come back before its request can leave:
        /// URLSession reported `taskIsWaitingForConnectivity` (Apple platforms, with
        /// `URLSessionConfiguration.waitsForConnectivity`), or a read with
        /// ``RetryPolicy/waitsForConnectivity`` failed offline and waits on the connectivity monitor.
        /// Show an offline banner from it instead of guessing from errors.
        case waitingForConnectivity
        /// The wait that ``waitingForConnectivity`` began ended after `duration`: `networkReturned`
        /// is `false` when the call's deadline or a cancellation ended it first.
        case connectivityWaitEnded(networkReturned: Bool, duration: Duration)
        /// The pipeline follows a redirect (RFC 9110 §15.4) to `location` (redacted).
        case redirected(statusCode: Int, location: String)
        /// How the HTTP cache answered.
        case cacheOutcome(CacheOutcome)
        /// The access token was refused and a refresh begins.
        case tokenRefreshStarted
        /// The refresh ended; `succeeded` is `false` when it threw.
        case tokenRefreshEnded(succeeded: Bool)
        /// The accepted response did not decode into the endpoint's `Response`; the error kind.
        /// Followed by ``callFailed(errorKind:)``.
        case decodingFailed(errorKind: String)
        /// The call was cancelled. Followed by ``callFailed(errorKind:)`` (kind `cancelled`),
        /// which ends the call: count it, not this, in an activity indicator.
        case cancelled
        /// The call ended with a decoded value and this status. Every call ends with exactly one
        /// `callEnded` or one ``callFailed(errorKind:)``.
        case callEnded(statusCode: Int)
        /// The call failed; the error kind (`offline`, `timedOut`, `notFound`, `decoding`,
        /// `cancelled`…). Every call ends with exactly one ``callEnded(statusCode:)`` or one
        /// `callFailed`.
        case callFailed(errorKind: String)
    }

    /// The call's request ID.
    public var requestID: RequestID
    /// The request method.
    public var method: HTTPMethod
    /// The call's path template, e.g. `/items/{id}`. A call whose endpoint names no template is
    /// named by its path with identifier segments (digits, an `@`, 24 characters or more) replaced
    /// by `{id}`, as ``NetworkMetricsEvent/pathTemplate`` is: `/tokens/3f9a…` never reaches a monitor.
    public var pathTemplate: String
    /// Time since the call started, on `ContinuousClock`.
    public var elapsed: Duration
    /// What happened.
    public var kind: Kind
}
