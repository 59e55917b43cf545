/// How a transport tells the call that its request really left for the network — part of the
/// ``Transport`` contract, so ``RequestOptions/onStart`` means the same on every transport.
///
/// The pipeline's last step binds a reporter for the call to the sending task (with the call's
/// other reporters, only while the call has an `onStart` hook still to run). A
/// transport reads ``current`` on the sending task and calls ``reportStart()`` at the earliest
/// moment it knows the request is on a connection:
///
/// - `CurlTransport`: when libcurl has a connection (made or reused) and is about to write the
///   request (`CURLOPT_PREREQFUNCTION`).
/// - ``URLSessionTransport``: when the first request body bytes were sent or the response head
///   arrived, whichever comes first — URLSession announces no earlier moment (a bodiless request
///   reports with its response head).
///
/// A transport that never reports is covered too: the pipeline reports the start when the
/// transport returns a response. A request that fails before any connection (no network, a host
/// that does not resolve, a refused connection) is never reported, so `onStart` does not run.
///
/// ```swift
/// // inside a custom transport's send(_:), on the sending task
/// let started = RequestStartReporter.current
/// // … once a connection carries the request:
/// started?.reportStart()
/// ```
public struct RequestStartReporter: Sendable {
    private let context: RequestContext

    /// Reports into `context`.
    package init(context: RequestContext) { self.context = context }

    /// The reporter of the call the current task is sending, or `nil` when the call does not wait
    /// for its start (no `onStart` hook, or it already ran).
    public static var current: RequestStartReporter? { TransportReporting.current?.start }

    /// Tells the call its request left for the network. Runs the call's `onStart` hook the first
    /// time (later reports — another attempt, a redirect hop — do nothing). Safe from any thread;
    /// the hook runs on the caller of this method, so call it where no lock of yours is held.
    public func reportStart() {
        context.fireStartHook()
    }
}
