/// What a transport reports back to the call it is sending — the bytes of its transfer
/// (``TransferProgressReporter``), the phase timings of its task (``TaskTimingsReporter``), the
/// moment its request left (``RequestStartReporter``) and a wait for the network
/// (``ConnectivityWaitReporter``, URLSession's `taskIsWaitingForConnectivity`) — bound as one task-local value around each
/// send by the pipeline's last step.
///
/// This is one of the two ways state reaches the layers of a call besides the request itself (the
/// other is the call's ``CallTraits``). Transports read it through
/// ``TransferProgressReporter/current``, ``TaskTimingsReporter/current`` and
/// ``RequestStartReporter/current`` on the sending task.
package struct TransportReporting: Sendable {
    /// The reporting of the send running in the current task; `nil` outside a pipeline's send
    /// (a token refresh made on the side, a transport used directly).
    @TaskLocal package static var current: TransportReporting?

    /// Where the transfer's bytes go; `nil` when the call did not ask for progress.
    package let progress: TransferProgressReporter?
    /// Where the task's phase timings go.
    package let timings: TaskTimingsReporter?
    /// Where the request's departure goes; `nil` once the call's `onStart` ran (or it has none).
    package let start: RequestStartReporter?

    /// Where a wait of the task for the network goes.
    package let connectivity: ConnectivityWaitReporter?

    /// Reporting into `progress`, `timings`, `start` and `connectivity`.
    package init(
        progress: TransferProgressReporter?, timings: TaskTimingsReporter?, start: RequestStartReporter? = nil,
        connectivity: ConnectivityWaitReporter? = nil
    ) {
        self.progress = progress
        self.timings = timings
        self.start = start
        self.connectivity = connectivity
    }
}
