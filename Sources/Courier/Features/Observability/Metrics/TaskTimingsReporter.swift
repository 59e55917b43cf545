/// How a transport hands phase timings (``TaskTimings``) to the call it is sending — part of the
/// ``Transport`` contract, so a transport of your own reports them like the built-in ones.
///
/// The pipeline's last step binds a reporter for the call to the sending task around each send. A
/// transport reads ``current`` on the sending task —
/// before handing work to a delegate queue, where task-locals are not visible — and calls
/// ``report(_:)`` once the platform has measured the task. ``URLSessionTransport``'s session
/// delegate keeps the reporter for the task it starts and reports when
/// `urlSession(_:task:didFinishCollecting:)` arrives (`TransportCapabilities.deliversTaskMetrics`:
/// Apple platforms); on Linux URLSession never delivers task metrics, so nothing is reported and
/// ``RequestContext/taskTimings`` stays `nil`. `CurlTransport` reports libcurl's own timings.
///
/// ```swift
/// // inside a custom transport's send(_:), on the sending task
/// let timings = TaskTimingsReporter.current
/// let start = ContinuousClock.now
/// // … send the request and read the response …
/// timings?.report(TaskTimings(total: ContinuousClock.now - start, isReusedConnection: false))
/// ```
public struct TaskTimingsReporter: Sendable {
    private let context: RequestContext

    /// Reports into `context`.
    package init(context: RequestContext) { self.context = context }

    /// The reporter of the call the current task is sending; `nil` outside a pipeline's send.
    public static var current: TaskTimingsReporter? { TransportReporting.current?.timings }

    /// Stores `timings` in the call's ``RequestContext/taskTimings`` (replacing an earlier attempt's).
    /// Safe to call from any thread. Timings reported after the interceptors have finished with the
    /// call are kept in the context but miss that call's metrics event.
    public func report(_ timings: TaskTimings) {
        context.taskTimings = timings
    }
}
