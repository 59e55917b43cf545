import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Repeats failed attempts as the endpoint's ``RetryPolicy`` allows, waiting between them.
///
/// Rules, in the order they are checked:
/// - **Only safe-to-repeat requests.** Idempotent methods, or a request that carries an
///   idempotency key (``RequestContext/idempotencyKey`` or an `Idempotency-Key` header) when
///   ``RetryPolicy/retriesKeyedNonIdempotentRequests`` is on. A plain POST or PATCH is sent once
///   (RFC 9110 §9.2.2): if the connection drops after the server stored it, the caller gets the
///   transport error rather than a duplicate. A call whose API declares it safe although its
///   method is not (a GraphQL query sent as `POST`) is repeated like a `GET`. Any request is
///   repeated after a failure that proves it never left the device (``neverSentErrorCodes``: no
///   connection could be made, the host name did not resolve) when the attempt followed no
///   redirect: no server can have seen it.
/// - **Only failures a new attempt can fix**: ``RetryPolicy/retryableStatusCodes`` (default 408,
///   429, 500, 502, 503, 504) unless the caller accepts that status itself (raw-status endpoints,
///   ``RequestContext/statusValidation``), ``RetryPolicy/retryableErrorCodes``, and a
///   ``RetryableError`` that says so; never another 4xx, never a cancellation. At most
///   ``RetryPolicy/maxRetries`` retries, and a `408 Request Timeout` is repeated at most once per
///   call (RFC 9110 §15.5.9).
/// - **Only bodies that can be produced again**: a request whose one-shot body stream was sent
///   (``BodyStream/once(_:length:)``) is never repeated; the caller gets the first response or error.
/// - **`Retry-After` is an instruction** (RFC 9110 §10.2.3): the next attempt is never sent earlier
///   than the server asked. A wait longer than ``RetryPolicy/maxRetryAfter`` stops the retries at
///   once, and the caller gets the response (its error carries the wait, ``NetworkError/retryAfter``).
///   Without one, exponential backoff with jitter (`RetryPolicy.jitteredBackoff(forRetry:random:)`).
/// - **Never a failure to get a token**: an attempt that ended in ``AuthInterceptor`` without a
///   token (a failed token refresh, a session that ended) is the call's answer. Its
///   ``TokenManager`` schedules the next refresh itself (it holds refreshes back after a
///   transient failure); another attempt would only ask the token endpoint again.
/// - **A ``RetryDecider``**, when given, has the last word on each failure within these limits.
/// - **Deadline**: a wait that would end after the call's deadline
///   (``RequestContext/startedAt`` + ``EndpointPolicy/deadline``) is not started; the last
///   response is returned (or the last error thrown) at once instead of timing out later.
/// - **Cancellation** is checked before every attempt, and the wait itself ends the moment the
///   task is cancelled; nothing more is sent.
/// - **Fleet safety**, per host and shared by all calls of the client (on by default): a retry is
///   sent only while the ``RetryBudget`` has balance and the host's ``CircuitBreaker`` is closed —
///   otherwise the call ends with its last response or error and ``RequestContext/retryRefusal``
///   says why. While the breaker is open, or a server's `Retry-After` on a 429/503 asks the host
///   to wait longer than the call may, a call fails at once with
///   ``NetworkError/backendUnavailable(host:retryAfter:)`` and sends nothing; a shorter host-wide
///   wait is waited for. A failure to get a token says nothing of the request's host: it is
///   neither counted nor lets the token endpoint's `Retry-After` pause the host. See <doc:FleetSafety>.
///
/// Each retry is recorded in the context (`RequestContext.retryRecords`) when its wait starts.
/// Its position in the pipeline is explained on the standard pipeline builder. Keep this the only
/// retry layer — <doc:Retries> explains why layered retries multiply.
///
/// ```swift
/// let retry = RetryInterceptor()                                      // production
/// let exact = RetryInterceptor(clock: testClock, random: { 0.5 })     // exact delays in tests
/// ```
public struct RetryInterceptor: Interceptor {
    /// Returns a uniform random number in `0...1` for the jitter.
    public typealias RandomSource = @Sendable () -> Double

    /// ``PipelineCapabilities/retries``.
    public var capabilities: PipelineCapabilities { .retries }

    private let clock: ElapsedClock
    private let random: RandomSource
    private let now: @Sendable () -> Date
    private let decider: RetryDecider?
    private let maximumRetries: Int?
    private let fleet: FleetGuard
    private let connectivity: (any ConnectivityWaiting)?

    /// Creates the interceptor.
    ///
    /// - Parameters:
    ///   - clock: Measures the deadline and performs the waits; `ContinuousClock` by default.
    ///     Inject a test clock to check delays exactly without sleeping.
    ///   - random: The jitter's random source, returning values in `0...1`.
    ///   - now: The wall-clock time used to resolve an HTTP-date `Retry-After`.
    ///   - decider: The app's own decision per failure; `nil` follows the policy alone.
    ///   - maximumRetries: A ceiling on the retries of every call of this client, whatever
    ///     ``RetryPolicy/maxRetries`` the endpoint declares; `nil` (the default) for none, `0` to
    ///     turn retries off for this client explicitly (a client whose pipeline has no retry
    ///     interceptor gets a default one, see ``PipelineCapabilities/retries``).
    ///   - budget: The retry budget per host, shared by every call through this interceptor (and
    ///     its copies); ``RetryBudget/standard`` by default, `nil` for none.
    ///   - circuitBreaker: The circuit breaker per host, which also applies a server's
    ///     `Retry-After` to every call to its host; ``CircuitBreaker/standard`` by default, `nil`
    ///     for neither.
    ///   - connectivity: What reads with ``RetryPolicy/waitsForConnectivity`` wait on when the
    ///     device is offline (a `CourierOffline` connectivity monitor); `nil` for no waiting.
    public init(
        clock: some Clock<Duration> = ContinuousClock(),
        random: @escaping RandomSource = { Double.random(in: 0...1) },
        now: @escaping @Sendable () -> Date = { Date() },
        decider: RetryDecider? = nil,
        maximumRetries: Int? = nil,
        budget: RetryBudget? = .standard,
        circuitBreaker: CircuitBreaker? = .standard,
        connectivity: (any ConnectivityWaiting)? = nil
    ) {
        self.clock = ElapsedClock(clock)
        self.random = random
        self.now = now
        self.decider = decider
        self.maximumRetries = maximumRetries.map { max(0, $0) }
        self.fleet = FleetGuard(budget: budget, breaker: circuitBreaker)
        self.connectivity = connectivity
    }

    public func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        let policy = context.policy.retry
        let limit = min(policy.maxRetries, maximumRetries ?? policy.maxRetries)
        let method = request.httpMethod.map { HTTPMethod(rawValue: $0) } ?? context.method
        // A call its API declares safe (a GraphQL query sent as POST) repeats like a GET. The
        // header is only looked up when the method alone does not decide (a lookup per call).
        let repeatable =
            limit > 0
            && (method.isIdempotent || context.isDeclaredSafe
                || policy.allowsRetry(
                    method: method,
                    hasIdempotencyKey: context.idempotencyKey != nil || TransportResendRule.hasKey(request)))
        // The remaining budget of the call, on this interceptor's clock.
        var deadline = clock.elapsed() + (context.policy.deadline - context.elapsed)

        let host = fleet.isActive ? FleetGuard.hostKey(of: request.url) : ""
        var isProbe = false
        if fleet.isActive {
            // The usual verdicts without a suspension point: only a pause or an open breaker waits.
            switch fleet.admit(host, isRetry: false, at: clock.elapsed()) {
            case .allowed: isProbe = false
            case .probe: isProbe = true
            case let verdict: isProbe = try await admitFirstAttempt(to: host, after: verdict, deadline: deadline, policy: policy)
            }
        }
        var retry = 0
        var requestTimeoutRetried = false
        var waitedForConnectivity = false
        // When the retry planned last was withdrawn from the budget, until it is sent: a call that
        // ends before sending it (cancelled in its wait, refused by the breaker after it) gives it
        // back, or retries that never reached the host would refuse later calls theirs.
        var unsentRetry: Duration?
        defer { if let withdrawn = unsentRetry { fleet.refundRetry(to: host, withdrawnAt: withdrawn) } }
        // A wait URLSession reports reaches the same monitor (ConnectivityWaitReporter).
        if let connectivity { context[ConnectivityMonitorKey.self] = connectivity }
        while true {
            if Task.isCancelled {
                // A half-open breaker's probe that is never sent reports a neutral outcome, or the
                // breaker would wait for it forever and refuse every later call.
                if isProbe { fleet.record(.neutral, of: host, isProbe: true, at: clock.elapsed(), random: random()) }
                throw CancellationError()
            }
            unsentRetry = nil  // the attempt goes out
            let redirectsBefore = context.redirects.count
            let outcome: Result<HTTPResponse, any Error>
            do {
                outcome = .success(try await next(request))
            } catch {
                outcome = .failure(error)
            }
            let wallClock = now()
            // Request body progress postponed the call's deadline (EndpointPolicy.deadline): the
            // budget of a long upload counts from its last bytes sent, when that is later.
            if let remaining = context.deadlineRemainingAfterBodyProgress {
                deadline = max(deadline, clock.elapsed() + remaining)
            }
            // The auth step's own failure (no token to be had): read on failures only, and
            // cleared so that a later attempt is judged on its own.
            var failedGettingToken = false
            if case .failure = outcome, context[AuthStepFailureKey.self] == true {
                failedGettingToken = true
                context[AuthStepFailureKey.self] = nil
            }
            if fleet.isActive {
                if failedGettingToken {
                    // The token endpoint's trouble (or the session's), not this host's.
                    fleet.record(.neutral, of: host, isProbe: isProbe, at: clock.elapsed(), random: random())
                } else {
                    report(outcome, of: host, sentTo: request.url, isProbe: isProbe, context: context, wallClock: wallClock)
                }
                isProbe = false
            }
            if !waitedForConnectivity, policy.waitsForConnectivity, let connectivity, method == .get || method == .head,
                case .failure(let error) = outcome, NetworkError(error).kind == .offline
            {
                waitedForConnectivity = true
                guard try await waitForConnectivity(connectivity, deadline: deadline, context: context) else {
                    return try outcome.get()
                }
                continue
            }
            let neverSent = limit > 0 && context.redirects.count == redirectsBefore && Self.wasNeverSent(outcome)
            guard repeatable || neverSent, retry < limit, !failedGettingToken,
                let failure = failure(of: outcome, context: context),
                context.canResendBody
            else {
                // The call ends with the auth step's failure: marked again for the client, which
                // does not count it as the API's (connectivity observers).
                if failedGettingToken { context[AuthStepFailureKey.self] = true }
                return try outcome.get()
            }
            if failure.reason == .status(408) {
                // RFC 9110 §15.5.9: the server closed an idle connection; one new attempt on a
                // fresh connection settles it, a second 408 is the server's answer.
                guard !requestTimeoutRetried else { return try outcome.get() }
                requestTimeoutRetried = true
            }
            // A cancelled call is never retried, whatever the last attempt returned.
            try Task.checkCancellation()
            guard let (delay, source) = await plan(failure, retry: retry, policy: policy, context: context, wallClock: wallClock),
                clock.elapsed() + delay <= deadline
            else { return try outcome.get() }
            let planned = clock.elapsed()
            if fleet.isActive {
                if let refusal = fleet.refusal(ofRetryTo: host, at: planned) {
                    context[RetryRefusalKey.self] = refusal
                    return try outcome.get()
                }
                unsentRetry = planned
            }
            context.update(RetryRecordsKey.self, default: []) {
                $0.append(RetryRecord(retry: retry, reason: failure.reason, delay: delay, delaySource: source))
            }
            context.emit(.retryScheduled(delay: delay, reason: "\(failure.reason)"))
            try await clock.sleep(delay)
            retry += 1
            if fleet.isActive, let refusal = try await admitRetry(to: host, deadline: deadline) {
                context[RetryRefusalKey.self] = refusal
                return try outcome.get()
            }
        }
    }

    /// Waits for the network until the deadline; records the wait. Returns whether it came back.
    private func waitForConnectivity(
        _ connectivity: any ConnectivityWaiting, deadline: Duration, context: RequestContext
    ) async throws -> Bool {
        let start = clock.elapsed()
        let remaining = deadline - start
        guard remaining > .zero else { return false }
        let reporter = ConnectivityWaitReporter(context: context)
        reporter.waitBegan()
        let sleep = clock.sleep
        let returned = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await connectivity.waitForConnectivity()
                return !Task.isCancelled
            }
            group.addTask {
                try? await sleep(remaining)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        reporter.waitEnded(after: clock.elapsed() - start, networkReturned: returned)
        try Task.checkCancellation()
        return returned
    }

    // MARK: - Fleet safety

    /// Admits the first attempt to `host`, whose first verdict was `first`: waits out a host-wide
    /// `Retry-After` that fits the call, else fails fast. Returns whether the attempt is the
    /// breaker's half-open probe.
    private func admitFirstAttempt(
        to host: String, after first: CircuitBreakerState.Admission, deadline: Duration, policy: RetryPolicy
    ) async throws -> Bool {
        var verdict = first
        // A pause can be extended while waiting; three rounds bound the loop.
        for round in 0..<3 {
            if round > 0 { verdict = fleet.admit(host, isRetry: false, at: clock.elapsed()) }
            switch verdict {
            case .allowed:
                return false
            case .probe:
                return true
            case .open(let remaining):
                throw NetworkError.backendUnavailable(host: host, retryAfter: remaining)
            case .paused(let remaining):
                guard remaining <= policy.maxRetryAfter, clock.elapsed() + remaining <= deadline else {
                    throw NetworkError.backendUnavailable(host: host, retryAfter: remaining)
                }
                try await clock.sleep(remaining)
            }
        }
        throw NetworkError.backendUnavailable(host: host, retryAfter: .zero)
    }

    /// Admits a retry to `host` after its wait: `nil` to send it, else why not.
    private func admitRetry(to host: String, deadline: Duration) async throws -> RetryRefusal? {
        for _ in 0..<3 {
            switch fleet.admit(host, isRetry: true, at: clock.elapsed()) {
            case .allowed, .probe:
                return nil
            case .open:
                return .circuitOpen
            case .paused(let remaining):
                // Another call's Retry-After: wait for it too when the deadline allows.
                guard clock.elapsed() + remaining <= deadline else { return .circuitOpen }
                try await clock.sleep(remaining)
            }
        }
        return .circuitOpen
    }

    /// Feeds an attempt's outcome to the host's breaker, and a `Retry-After` on a 429 or 503 the
    /// caller does not accept as its answer to the host-wide pause.
    private func report(
        _ outcome: Result<HTTPResponse, any Error>, of host: String, sentTo url: URL?, isProbe: Bool,
        context: RequestContext, wallClock: Date
    ) {
        let now = clock.elapsed()
        // An outcome from another host says nothing of this one: the answer of a redirect's
        // target on another host. (The auth step's own failures never get here.)
        let answered = Self.isAnswered(outcome, by: host, sentTo: url)
        fleet.record(answered ? FleetGuard.outcome(of: outcome) : .neutral, of: host, isProbe: isProbe, at: now, random: random())
        guard answered else { return }
        // Only a 429 or 503 the call does not accept pauses the host: `Retry-After` is read for
        // those alone, not for every response.
        let retryAfter: RetryAfter?
        switch outcome {
        case .success(let response):
            guard Self.pausesHost(response.statusCode, context: context) else { return }
            retryAfter = RetryAfter(response: response)
        case .failure(let error):
            guard let failed = (error as? NetworkError)?.failedResponse,
                Self.pausesHost(failed.statusCode, context: context)
            else { return }
            retryAfter = failed.retryAfter
        }
        guard let wait = context.policy.retry.retryAfterDelay(retryAfter, now: wallClock) else { return }
        fleet.pause(host, for: wait, from: now)
    }

    /// Whether `outcome` came from `host`: `false` only when it names another host (a response's
    /// URL, or a transport error's failing URL). An outcome that names none counts as the host's.
    static func isAnswered(_ outcome: Result<HTTPResponse, any Error>, by host: String, sentTo sent: URL? = nil) -> Bool {
        // The common case, without parsing a host: the response of the URL this attempt sent.
        if case .success(let response) = outcome, response.url == nil || response.url == sent { return true }
        let url: URL?
        switch outcome {
        case .success(let response):
            url = response.url
        case .failure(let error as NetworkError):
            switch error {
            case .transport(let underlying), .offline(let underlying), .timedOut(let underlying?):
                url = underlying.failingURL
            default:
                url = error.failedResponse?.url
            }
        case .failure(let error as URLError):
            url = error.failingURL
        case .failure:
            url = nil
        }
        guard let url else { return true }
        return FleetGuard.hostKey(of: url) == host
    }

    /// Whether a response with `status` may pause its host: a 429 or 503 the call does not accept.
    private static func pausesHost(_ status: Int, context: RequestContext) -> Bool {
        (status == 429 || status == 503) && !context.statusValidation.accepts(status)
    }

    /// The wait before the next attempt and where it came from, or `nil` to stop.
    private func plan(
        _ failure: AttemptFailure, retry: Int, policy: RetryPolicy, context: RequestContext, wallClock: Date
    ) async -> (Duration, RetryRecord.DelaySource)? {
        // The server's wait is a lower bound nobody may undercut (RFC 9110 §10.2.3); one longer
        // than the policy accepts ends the retries, whatever a decider would say.
        let serverWait = policy.retryAfterDelay(failure.retryAfter, now: wallClock)
        if let serverWait, serverWait > policy.maxRetryAfter { return nil }
        var proposal = RetryDecision.doNotRetry
        var source = RetryRecord.DelaySource.backoff
        if failure.retryableByPolicy {
            if let serverWait {
                proposal = .retry(after: serverWait)
                source = .retryAfter
            } else {
                proposal = .retry(after: policy.jitteredBackoff(forRetry: retry, random: random()))
            }
        }
        var decision = proposal
        if let decider {
            decision = await decider.decision(
                for: RetryFailure(response: failure.response, error: failure.error, retry: retry, proposal: proposal),
                context: context)
            if decision != proposal { source = .decider }
        }
        guard case .retry(let wait) = decision, !Task.isCancelled else { return nil }
        let delay = max(wait, serverWait ?? .zero, .zero)
        if let serverWait, delay == serverWait { source = .retryAfter }
        return (delay, source)
    }

    private struct AttemptFailure {
        var reason: RetryRecord.Reason
        var retryAfter: RetryAfter?
        var retryableByPolicy: Bool
        var response: HTTPResponse?
        var error: (any Error)?
    }

    /// The failure in `outcome`, or `nil` for a response the caller accepts or a cancellation.
    private func failure(of outcome: Result<HTTPResponse, any Error>, context: RequestContext) -> AttemptFailure? {
        let policy = context.policy.retry
        switch outcome {
        case .success(let response):
            // A status the caller asked to handle itself (raw-status mode) is its answer, not a failure.
            guard !context.accepts(statusCode: response.statusCode) else { return nil }
            return AttemptFailure(
                reason: .status(response.statusCode), retryAfter: RetryAfter(response: response),
                retryableByPolicy: policy.isRetryable(statusCode: response.statusCode), response: response)
        case .failure(let error):
            guard !NetworkError(error).isCancellation else { return nil }
            let retryable = policy.isRetryable(error)
            if let failed = (error as? NetworkError)?.failedResponse {
                return AttemptFailure(
                    reason: .status(failed.statusCode), retryAfter: failed.retryAfter,
                    retryableByPolicy: retryable, error: error)
            }
            if let code = Self.urlErrorCode(of: error) {
                return AttemptFailure(reason: .transport(code), retryableByPolicy: retryable, error: error)
            }
            return AttemptFailure(reason: .other(String(describing: error)), retryableByPolicy: retryable, error: error)
        }
    }

    /// Transport failures that prove the request never left the device: no connection to the host
    /// could be made (`cannotConnectToHost`: refused or unreachable), or its name did not resolve
    /// (`cannotFindHost`, `dnsLookupFailed`). A request on a connection that was made and then
    /// failed is `networkConnectionLost` or `timedOut` instead, which a server may have received.
    public static let neverSentErrorCodes: Set<URLError.Code> = [.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed]

    /// Whether `outcome` is a failure of ``neverSentErrorCodes``.
    private static func wasNeverSent(_ outcome: Result<HTTPResponse, any Error>) -> Bool {
        guard case .failure(let error) = outcome, let code = urlErrorCode(of: error) else { return false }
        return neverSentErrorCodes.contains(code)
    }

    private static func urlErrorCode(of error: any Error) -> URLError.Code? {
        switch error {
        case let error as URLError:
            return error.code
        case NetworkError.offline(let underlying), NetworkError.transport(let underlying),
            NetworkError.timedOut(let underlying?):
            return underlying.code
        default:
            return nil
        }
    }
}

/// Any `Clock<Duration>` reduced to what the retry loop needs: time elapsed since the interceptor
/// was created, and a cancellable sleep.
private struct ElapsedClock: Sendable {
    let elapsed: @Sendable () -> Duration
    let sleep: @Sendable (Duration) async throws -> Void

    init<C: Clock>(_ clock: C) where C.Duration == Duration {
        let origin = clock.now
        elapsed = { origin.duration(to: clock.now) }
        sleep = { try await clock.sleep(for: $0) }
    }
}
