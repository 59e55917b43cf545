/// What a transport reports back to the call it is sending — part of the ``Transport`` contract,
/// so a transport of your own reports like the built-in ones: the bytes of its transfer (for the
/// ``TransferProgress`` of uploads and downloads), the phase timings of its task (``TaskTimings``)
/// and the moment its request left (``RequestOptions/onStart``).
///
/// The pipeline's last step binds one reporter to the sending task around each send (redirect
/// hops and retries included). A transport reads ``current`` on the sending task when it starts a
/// request — before handing work to a delegate queue or another thread, where task-locals are not
/// visible — keeps the value, and calls its methods from whatever thread its callbacks run on.
/// Every method is safe from any thread and returns at once; a report nobody asked for (progress
/// for a call that wants none, a start after the first) does nothing.
///
/// ```swift
/// // inside a custom transport's send(_:), on the sending task
/// let reporter = TransportReporter.current
/// let begin = ContinuousClock.now
/// // … once a connection carries the request:
/// reporter?.reportStart()
/// reporter?.didSend(4096, of: 10_000)      // request body bytes sent so far, of the total
/// reporter?.didReceive(512, of: nil)       // response body bytes so far; total unknown
/// reporter?.report(TaskTimings(total: ContinuousClock.now - begin, isReusedConnection: false))
/// ```
///
/// - ``URLSessionTransport`` reports progress from its session delegate, the start when the first
///   body bytes went out or the response head arrived, and timings when URLSession delivers
///   `URLSessionTaskMetrics` (Apple platforms; never on Linux, where ``RequestContext/taskTimings``
///   stays `nil`).
/// - `CurlTransport` reports progress and libcurl's own timings, and the start when libcurl has a
///   connection and is about to write the request (`CURLOPT_PREREQFUNCTION`).
/// - A transport that never reports the start is covered: the pipeline reports it when the
///   transport returns a response. A request that fails before any connection is never reported,
///   so `onStart` does not run.
///
/// Besides the request itself, this is one of the two ways state reaches the layers of a call
/// (the other is the call's ``RequestContext``).
public struct TransportReporter: Sendable {
    /// The reporter bound to the current task by the pipeline's last step.
    @TaskLocal package static var bound: TransportReporter?

    /// The reporter of the call the current task is sending; `nil` outside a pipeline's send (a
    /// transport used directly). A token refresh made on the side gets one that carries only its
    /// body limit.
    public static var current: TransportReporter? { bound }

    /// Where the transfer's bytes go; `nil` when the call did not ask for progress.
    package let progress: TransferProgressReporter?
    /// Where the task's phase timings go.
    package let timings: TaskTimingsReporter?
    /// Where the request's departure goes; `nil` once the call's `onStart` ran (or it has none).
    package let start: RequestStartReporter?
    /// Where a wait of the task for the network goes.
    package let connectivity: ConnectivityWaitReporter?
    /// The most response body bytes this buffered call may hold, counted after content decoding
    /// (``APIClient/Configuration/maximumResponseBodySize``); `nil` for no limit, and for a
    /// streamed call. A transport stops a body that grows past it and throws
    /// ``NetworkError/responseTooLarge(limit:)``, without holding the rest in memory.
    public let maximumBodySize: Int?

    /// Reporting into `progress`, `timings`, `start` and `connectivity`, with the call's body limit.
    package init(
        progress: TransferProgressReporter?, timings: TaskTimingsReporter?, start: RequestStartReporter? = nil,
        connectivity: ConnectivityWaitReporter? = nil, maximumBodySize: Int? = nil
    ) {
        self.progress = progress
        self.timings = timings
        self.start = start
        self.connectivity = connectivity
        self.maximumBodySize = maximumBodySize
    }

    /// `true` when the call wants transfer progress: a transport may skip counting bytes otherwise.
    public var reportsProgress: Bool { progress != nil }

    /// `true` while the call waits for its start (it has an `onStart` hook that has not run).
    public var awaitsStart: Bool { start != nil }

    /// The request body has sent `totalBytesSent` bytes so far, of `expected` bytes when known.
    ///
    /// Besides an upload's progress, this is what postpones the call's deadline while a large or
    /// streamed body is sent (``EndpointPolicy/deadline``): a transport that never reports it
    /// leaves such a call the deadline counted from its start.
    public func didSend(_ totalBytesSent: Int64, of expected: Int64?) {
        progress?.didSend(totalBytesSent, of: expected)
    }

    /// The response body has delivered `totalBytesReceived` bytes so far, of `expected` bytes when known.
    public func didReceive(_ totalBytesReceived: Int64, of expected: Int64?) {
        progress?.didReceive(totalBytesReceived, of: expected)
    }

    /// Stores `timings` in the call's ``RequestContext/taskTimings`` (replacing an earlier
    /// attempt's). Timings reported after the interceptors have finished with the call are kept
    /// in the context but miss that call's metrics event.
    public func report(_ timings: TaskTimings) {
        self.timings?.report(timings)
    }

    /// Tells the call its request left for the network: runs the call's `onStart` hook the first
    /// time (later reports — another attempt, a redirect hop — do nothing). The hook runs on the
    /// caller of this method, so call it where no lock of yours is held.
    public func reportStart() {
        start?.reportStart()
    }
}
