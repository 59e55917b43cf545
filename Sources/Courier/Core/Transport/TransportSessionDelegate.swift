import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session delegate of ``URLSessionTransport``: one delegate-driven implementation for Apple
/// platforms and Linux.
///
/// Every call runs through it, buffered (``run(_:pinning:)``) or streamed
/// (``stream(_:limit:pinning:)``). Per-task behaviour — where the body goes, upload progress, the
/// pins a server-trust challenge must pass, where task metrics go — lives in registries keyed by
/// task identifier, not in per-task delegates, which FoundationNetworking ignores. Where the
/// platforms differ the delegate asks its ``TransportCapabilities``:
///
/// - **Redirects are never followed by URLSession**: the 3xx response is returned as is and
///   Courier's own redirect step (`RedirectFollower`) decides what to send next, the same way on
///   every platform and transport (RFC 9110 §15.4).
/// - **HTTP authentication challenges get no credential**: credentials are explicit header fields
///   (``BasicCredentials``, ``AuthInterceptor``). Where a challenge ends the task
///   (``TransportCapabilities/challengeEndsTask``, Linux: swift-corelibs-foundation raises it once
///   the whole 401 arrived and otherwise hangs until the deadline) the delegate hands the 401, its
///   header fields and body, to the call and cancels the challenge; elsewhere default handling
///   returns the 401 (the session is ephemeral, with no stored credential).
/// - **Server-trust challenges** go to the ``ServerTrustEvaluator`` with the task's pins (Apple;
///   Linux raises none).
/// - **Back-pressure**: a full stream buffer suspends the task only when
///   ``TransportCapabilities/canSuspendTasks``; otherwise the body fails with
///   ``NetworkError/streamBufferOverflow(limit:)``.
/// - **Task metrics** become the call's ``TaskTimings`` when
///   ``TransportCapabilities/deliversTaskMetrics``.
final class TransportSessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
    /// What the session underneath can do.
    let capabilities: TransportCapabilities
    /// Checks server-trust challenges against a task's pins.
    let serverTrust: any ServerTrustEvaluator
    /// Answers client-certificate challenges with the identity of the challenged host.
    let clientCertificates: any ClientCertificateProvider
    /// The client identity of each host (lower-case), for mutual TLS.
    let clientIdentities: [String: ClientIdentity]
    /// The streamed calls running now, by task identifier.
    let streams = Locked<[Int: StreamingCall]>([:])
    /// The buffered calls running now, by task identifier.
    let calls = Locked<[Int: BufferedCall]>([:])
    /// Per-task pins and metrics destinations, by task identifier.
    let taskOptions = Locked<[Int: TaskOptions]>([:])
    /// The longest one hold of a delivery lasts, in seconds (``DeliveryHold``).
    let maxHold: TimeInterval
    /// The most time holds may add up to within one second, in seconds (``DeliveryHold``).
    let holdBudgetPerSecond: TimeInterval

    /// A delegate for a session with `capabilities`, checking trust with `serverTrust`.
    init(
        capabilities: TransportCapabilities = .current, serverTrust: any ServerTrustEvaluator = PlatformAdapters.serverTrust,
        clientCertificates: any ClientCertificateProvider = PlatformAdapters.clientCertificates,
        clientIdentities: [String: ClientIdentity] = [:], maxHold: TimeInterval = DeliveryHold.defaultMaxHold,
        holdBudgetPerSecond: TimeInterval = DeliveryHold.holdBudgetPerSecond
    ) {
        self.maxHold = maxHold
        self.holdBudgetPerSecond = holdBudgetPerSecond
        self.capabilities = capabilities
        self.serverTrust = serverTrust
        self.clientCertificates = clientCertificates
        self.clientIdentities = clientIdentities
    }

    /// Records the task's pins and the calling task's reporters (read here, on the caller's task,
    /// where task-locals are visible).
    func register(_ id: Int, pinning: PinningPolicy?) {
        register(id, pinning: pinning, reporters: TaskReporters.current(capabilities))
    }

    /// ``register(_:pinning:)`` with the calling task's reporters read beforehand (off the task).
    func register(_ id: Int, pinning: PinningPolicy?, reporters: TaskReporters) {
        guard pinning != nil || !reporters.isEmpty else { return }
        taskOptions.withLock {
            $0[id] = TaskOptions(
                pinning: pinning, timings: reporters.timings, started: reporters.started,
                connectivity: reporters.connectivity)
        }
    }

    /// Reports the task's request as gone to the network, once: the first body bytes were sent or
    /// the response head arrived (URLSession announces no earlier moment).
    func reportStart(_ id: Int) {
        let started = taskOptions.withLock { options -> RequestStartReporter? in
            defer { options[id]?.started = nil }
            return options[id]?.started
        }
        started?.reportStart()
    }

    /// Starts the task `id`, whose call is registered — unless the calling task was cancelled
    /// before it started (its cancellation handler may already have run and found nothing to wait
    /// for): then it is never started and its call ends with `URLError.cancelled`. A cancel after
    /// this check reaches the running task and completes it through the delegate.
    func startUnlessCancelled(_ id: Int, _ control: TaskControl.Commands) {
        if Task.isCancelled {
            complete(id, error: URLError(.cancelled), response: nil)
        } else {
            control.resume()
        }
    }

    /// Ends the task's call with `error` (mapped to the code Apple platforms use, or to the pin
    /// failure that cancelled the connection) or with `response` and the body received.
    func complete(_ id: Int, error: (any Error)?, response: URLResponse?) {
        let options = taskOptions.withLock { $0.removeValue(forKey: id) }
        if let options { Self.endConnectivityWait(options, networkReturned: error == nil) }
        let failure: URLError? = error.map { error in
            if let pinning = options?.pinningFailure { return pinning.urlError }
            if let identity = options?.clientCertificateFailure { return identity }
            let urlError = error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])
            return URLSessionTransport.undecodableContent(urlError, response: response)
                ?? URLSessionTransport.mappedFailure(urlError)
        }
        if completeStreamed(id, error: failure, response: response) { return }
        finish(id) { body in
            if let failure { return .failure(failure) }
            guard let http = response as? HTTPURLResponse else { return .failure(URLError(.badServerResponse)) }
            return .success(HTTPResponse(http, body: body))
        }
    }

    /// Whether `status` is an interim response (1xx other than 101), which a final one follows.
    static func isInterim(_ status: Int) -> Bool { (100..<200).contains(status) && status != 101 }

    // MARK: URLSession callbacks (every platform)

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        reportStart(dataTask.taskIdentifier)
        connectivityReturned(dataTask.taskIdentifier)
        // FoundationNetworking hands an interim head (100 Continue, 103 Early Hints) to the delegate
        // before the final one; a streamed call waits for the final head (RFC 9110 §15.2). A 101
        // is final: the connection changes protocol.
        if let http = response as? HTTPURLResponse, !Self.isInterim(http.statusCode) {
            deliverHead(dataTask.taskIdentifier, http)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let id = dataTask.taskIdentifier
        // Cancelled on a queue of its own (``TaskControl``): on Linux `cancel()` waits for the
        // session's work queue, which waits for this delegate callback.
        receive(id, data) { TaskControl.Commands(SessionTask(task: dataTask, taskIdentifier: id)).cancel() }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        complete(task.taskIdentifier, error: error, response: task.response)
    }

    /// Upload progress of every call this delegate runs. A streamed body's expected length is
    /// unknown (-1) where URLSession sends it chunked.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        let id = task.taskIdentifier
        reportStart(id)
        connectivityReturned(id)
        let reporter = streams.withLock { $0[id]?.progress } ?? calls.withLock { $0[id]?.progress }
        reporter?.didSend(totalBytesSent, of: totalBytesExpectedToSend > 0 ? totalBytesExpectedToSend : nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let (disposition, credential) = answer(challenge, taskID: task.taskIdentifier)
        completionHandler(disposition, credential)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics) {
        reportMetrics(task.taskIdentifier, SessionTaskMetrics(base: metrics))
    }
}

/// The calling task's reporters a URLSession task reports into, read on the calling task (they
/// are task-locals) and kept per task identifier.
struct TaskReporters: Sendable {
    /// Where task metrics go, where the platform delivers them.
    var timings: TaskTimingsReporter?
    /// Where the request's departure goes, until it is reported.
    var started: RequestStartReporter?
    /// Where waits for the network go, where URLSession reports them.
    var connectivity: ConnectivityWaitReporter?

    /// Nothing to report into.
    var isEmpty: Bool { timings == nil && started == nil && connectivity == nil }

    /// The current task's reporters that a session with `capabilities` can feed.
    static func current(_ capabilities: TransportCapabilities) -> TaskReporters {
        TaskReporters(
            timings: capabilities.deliversTaskMetrics ? TaskTimingsReporter.current : nil,
            started: RequestStartReporter.current,
            connectivity: capabilities.reportsWaitingForConnectivity ? TransportReporter.bound?.connectivity : nil)
    }
}

/// Per-task behaviour the session delegate applies, registered when the task is made.
struct TaskOptions: Sendable {
    /// The pins the task's server-trust challenges must pass, if any.
    var pinning: PinningPolicy?
    /// Where the task's metrics go (kept only when the platform delivers them).
    var timings: TaskTimingsReporter?
    /// Where the task reports that its request left for the network, until it did.
    var started: RequestStartReporter?
    /// The pin check that refused the connection: the call fails with it, not with the
    /// cancellation the refusal causes.
    var pinningFailure: PinningFailure?
    /// The client identity that could not be presented: the call fails with it, not with the
    /// cancellation the refusal causes.
    var clientCertificateFailure: URLError?
    /// Where the task reports a wait for the network (kept only where URLSession reports waits).
    var connectivity: ConnectivityWaitReporter?
    /// When the task's current wait for the network began; `nil` while it does not wait.
    var waitingSince: ContinuousClock.Instant?
}

extension HTTPResponse {
    /// A response from Foundation's `HTTPURLResponse` and the body bytes.
    init(_ response: HTTPURLResponse, body: Data) {
        self.init(statusCode: response.statusCode, headers: HTTPHeaders(response), body: body, url: response.url)
    }
}
