/// Where a transport hands phase timings (``TaskTimings``) to the call it is sending: the timings
/// part of ``TransportReporter``, which transports use. ``URLSessionTransport``'s session delegate
/// keeps it for the task it starts and reports when `urlSession(_:task:didFinishCollecting:)`
/// arrives (`TransportCapabilities.deliversTaskMetrics`: Apple platforms).
package struct TaskTimingsReporter: Sendable {
    private let context: RequestContext

    /// Reports into `context`.
    package init(context: RequestContext) { self.context = context }

    /// The reporter of the call the current task is sending; `nil` outside a pipeline's send.
    package static var current: TaskTimingsReporter? { TransportReporter.bound?.timings }

    /// Stores `timings` in the call's ``RequestContext/taskTimings`` (replacing an earlier attempt's).
    /// Safe to call from any thread. Timings reported after the interceptors have finished with the
    /// call are kept in the context but miss that call's metrics event.
    package func report(_ timings: TaskTimings) {
        context.taskTimings = timings
    }
}
