import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A typed slot in a ``RequestContext`` that interceptors use to hand data to each other or to the
/// caller (snapshots, metrics, cache outcome) without the context knowing every feature.
///
/// ```swift
/// enum CacheOutcomeKey: RequestContextKey { typealias Value = CacheOutcome }
///
/// func markHit(_ context: RequestContext) {       // in an interceptor
///     context[CacheOutcomeKey.self] = .hit
/// }
/// ```
public protocol RequestContextKey {
    /// The type stored in the slot.
    associatedtype Value: Sendable
}

/// The state of one logical call — shared by every attempt, retry and interceptor of that call.
///
/// Created by the client once per `send`, never per attempt: the request ID and idempotency key
/// stay the same on every retry, so server logs and deduplication see one operation. Thread-safe:
/// mutable parts sit behind a lock, so interceptors running on different tasks may read and write.
public final class RequestContext: Sendable {
    /// Correlates the call across client logs, records, metrics and the server (`X-Request-ID`).
    public let requestID: RequestID
    /// The policy of the endpoint being called.
    public let policy: EndpointPolicy
    /// The HTTP method of the logical call.
    public let method: HTTPMethod
    /// The endpoint's path template for metrics, e.g. `/items/{id}`; the raw path when it has none.
    public let pathTemplate: String
    /// Whether ``pathTemplate`` is the endpoint's path because it gave no template: metrics then
    /// take the identifiers out of it (``MetricsPathTemplate``).
    package let pathTemplateIsDefault: Bool
    /// The `Idempotency-Key` of this call: generated once for ``IdempotencyPolicy/automatic``, the
    /// caller's key for ``IdempotencyPolicy/key(_:)``, `nil` otherwise.
    public let idempotencyKey: String?
    /// When the call started, on `ContinuousClock` (monotonic).
    public let startedAt: ContinuousClock.Instant
    /// The statuses the caller accepts (the endpoint's ``Endpoint/statusValidation``). A status the
    /// caller asked to handle itself is never retried and never fails validation.
    public let statusValidation: StatusValidation
    /// Called once, when the call's request first leaves for the network (``TransportReporter``).
    let onStart: (@Sendable () -> Void)?
    /// What the call is beyond method, URL and policy (streamed, declared safe…): fixed here.
    package let traits: CallTraits

    private let state = Locked(State())

    private struct State: Sendable {
        var attempt = 0
        var startHookArmed = true
        var lastSent: URLRequest?
        var deadlineExpired = false
        /// The scheduler enforcing the call's deadline, bound by ``APIClient/withDeadline``: its
        /// clock times the request body's progress.
        var deadlineClock: (any DeadlineScheduling)?
        /// When request body bytes were last sent, on ``deadlineClock`` (`nil` before any).
        var lastBodyProgress: Duration?
        /// The deadline being enforced and when it was armed, on ``deadlineClock``.
        var deadline: (timeout: Duration, armedAt: Duration)?
        var bodyStream: BodyStream?
        var values: [ObjectIdentifier: any Sendable] = [:]
        /// The decoding step's actions (RequestContext+Decoding.swift); `nil` until the client
        /// says it will decode.
        var decodingHooks: DecodingHooks?
        /// The client's event monitors (RequestContext+Events.swift); `nil` when it has none.
        var eventMonitors: [any NetworkEventMonitor]?
        /// The client's redactor, for URLs in events; set with the monitors.
        var eventRedactor: Redactor?
        /// The path template events carry; set with the monitors.
        var eventPathTemplate: String?
        /// What the logging interceptors recorded (RequestContext+Records.swift).
        var records = CallRecords()
        /// The call's redirect mode (RedirectMode.swift): a field, not a slot, since the redirect
        /// step reads it on every call.
        var redirectMode = RedirectMode.follow
        /// The environment's pins when the client's transport does not enforce them (see
        /// ``RequestContext/unenforcedPins``); `nil` almost always.
        var unenforcedPins: PinningPolicy?

        /// Stores a slot's value; the first one reserves room for the few a call fills (a
        /// logged, measured call fills four or five), instead of growing the table at each.
        mutating func store(_ value: (any Sendable)?, at key: ObjectIdentifier) {
            if values.isEmpty, value != nil { values.reserveCapacity(8) }
            values[key] = value
        }
    }

    /// Creates the context of one call.
    ///
    /// - Parameters:
    ///   - requestID: The request ID; a fresh random one by default.
    ///   - policy: The endpoint's policy.
    ///   - method: The request method.
    ///   - pathTemplate: The path template used for metrics.
    ///   - statusValidation: The statuses the caller accepts; 2xx by default.
    ///   - startedAt: The start instant; now by default.
    public convenience init(
        requestID: RequestID = RequestID(),
        policy: EndpointPolicy = .standard,
        method: HTTPMethod = .get,
        pathTemplate: String = "",
        statusValidation: StatusValidation = .successful,
        startedAt: ContinuousClock.Instant = .now
    ) {
        self.init(
            requestID: requestID, policy: policy, method: method, pathTemplate: pathTemplate,
            statusValidation: statusValidation, startedAt: startedAt, onStart: nil)
    }

    /// Creates the context of a call made by Courier's own modules, with its ``CallTraits``.
    package init(
        requestID: RequestID = RequestID(), policy: EndpointPolicy, method: HTTPMethod, pathTemplate: String,
        pathTemplateIsDefault: Bool = false, statusValidation: StatusValidation = .successful,
        startedAt: ContinuousClock.Instant = .now, onStart: (@Sendable () -> Void)?, traits: CallTraits = CallTraits()
    ) {
        self.traits = traits
        self.pathTemplateIsDefault = pathTemplateIsDefault
        self.statusValidation = statusValidation
        self.onStart = onStart
        self.requestID = requestID
        self.policy = policy
        self.method = method
        self.pathTemplate = pathTemplate
        self.startedAt = startedAt
        switch policy.idempotency {
        case .none: idempotencyKey = nil
        case .automatic: idempotencyKey = UUID.random().uuidString
        case .key(let key): idempotencyKey = key
        }
    }

    /// Runs ``RequestOptions/onStart`` once, the first time the call's request leaves for the
    /// network (reported by the transport, or proven by a response).
    func fireStartHook() {
        guard let onStart,
            state.withLock({ state in
                defer { state.startHookArmed = false }
                return state.startHookArmed
            })
        else { return }
        onStart()
    }

    /// The last request handed to the transport (with the token the auth interceptor added), so
    /// error snippets and messages can hide the request's own secrets: its secret header fields,
    /// query parameters and body fields.
    var lastSentRequest: URLRequest? { state.withLock { $0.lastSent } }

    /// Keeps the request handed to the transport (a copy-on-write value: its header fields are
    /// only read if an error snippet needs them).
    func recordSent(_ request: URLRequest) { state.withLock { $0.lastSent = request } }

    /// `texts` — the server's words about this call, such as a GraphQL error's message — with the
    /// secrets of the request last handed to the transport (its secret header fields, query
    /// parameters and body fields, by the default ``Redactor``'s lists) replaced by the marker, as
    /// a status error's message hides them; unchanged when nothing was sent.
    package func hidingSentSecrets(in texts: [String]) -> [String] {
        guard let request = lastSentRequest else { return texts }
        let redactor = Redactor()
        var secrets = SecretValues()
        redactor.learn(request: request, into: &secrets)
        guard !secrets.isEmpty else { return texts }
        return texts.map { redactor.scrub($0, secrets: secrets) }
    }

    /// Whether the call has an `onStart` hook that has not run yet.
    var awaitsStart: Bool { onStart != nil && state.withLock { $0.startHookArmed } }

    /// Work done for the call after its answer (a background revalidation) must not look like
    /// the call starting: the hook is spent.
    func disarmStartHook() { state.withLock { $0.startHookArmed = false } }

    /// Number of attempts started so far: 0 before the transport is first reached, 1 during the
    /// first attempt, 2 during the first retry, and so on.
    public var attempt: Int { state.withLock { $0.attempt } }

    /// Records the start of a new attempt and returns its number (1 for the first).
    /// Called by the innermost layer that sends — see ``Pipeline``.
    @discardableResult
    package func beginAttempt() -> Int {
        state.withLock {
            $0.attempt += 1
            return $0.attempt
        }
    }

    /// `true` once the call's total deadline (``EndpointPolicy/deadline``) has passed. The client
    /// then cancels the call's task; the ``Pipeline`` reports the resulting cancellation to every
    /// interceptor as ``NetworkError/timedOut(_:)``, so logs and metrics count a timeout, not a
    /// cancellation.
    package var isDeadlineExpired: Bool { state.withLock { $0.deadlineExpired } }

    /// Marks the deadline as passed (called by the client's deadline scheduler).
    package func markDeadlineExpired() { state.withLock { $0.deadlineExpired = true } }

    /// Binds the scheduler that enforces the call's deadline of `timeout` from now: request body
    /// progress is timed on its clock from now on (``noteBodyProgress()``).
    func bindDeadlineClock(_ deadlines: any DeadlineScheduling, timeout: Duration) {
        let now = deadlines.elapsed
        state.withLock { state in
            state.deadlineClock = deadlines
            state.deadline = (timeout, now)
        }
    }

    /// Whether the deadline's time has passed by its clock, counted from the later of when it was
    /// armed and the last request body bytes sent — whether or not its timer has fired yet.
    private var deadlineHasPassed: Bool {
        state.withLock { state in
            guard let clock = state.deadlineClock, let deadline = state.deadline else { return false }
            let since = max(deadline.armedAt, state.lastBodyProgress ?? deadline.armedAt)
            return clock.elapsed - since >= deadline.timeout
        }
    }

    /// Records that request body bytes were just sent: the deadline then counts from now
    /// (``EndpointPolicy/deadline``). Called by the progress reporter the pipeline's last step
    /// hands the transport; does nothing before a deadline clock is bound.
    package func noteBodyProgress() {
        state.withLock { state in
            guard let clock = state.deadlineClock else { return }
            state.lastBodyProgress = clock.elapsed
        }
    }

    /// How long ago, on the deadline's clock, request body bytes were last sent; `nil` before any.
    var timeSinceBodyProgress: Duration? {
        state.withLock { state in
            guard let clock = state.deadlineClock, let last = state.lastBodyProgress else { return nil }
            return clock.elapsed - last
        }
    }

    /// What is left of the deadline counted from the last request body bytes sent
    /// (``EndpointPolicy/deadline`` minus the time since); `nil` before any were sent, when the
    /// deadline counts from the call's start alone. Negative once it has passed.
    package var deadlineRemainingAfterBodyProgress: Duration? {
        timeSinceBodyProgress.map { policy.deadline - $0 }
    }

    /// What the call's layers see for `error`: ``NetworkError/timedOut(_:)`` (`nil`) when it is
    /// the cancellation the client caused because the deadline passed (so logs, metrics and the
    /// caller count a timeout), or the transport's own timeout once the deadline's time has passed;
    /// `error` otherwise. The one place the deadline flag is read.
    ///
    /// The transport's idle timeout is a backstop one second past the deadline
    /// (`RequestBuilder.idleTimeout(for:)`); on a busy machine the deadline's timer, a task on the
    /// cooperative pool, can fire later than that backstop. The call ran out of its time either
    /// way, and says so in the same words on every transport.
    package func mappingDeadline(_ error: any Error) -> any Error {
        if isDeadlineExpired, NetworkError(error).isCancellation { return NetworkError.timedOut(nil) }
        if Self.isTransportTimeout(error), deadlineHasPassed { return NetworkError.timedOut(nil) }
        return error
    }

    /// Whether `error` is a transport's idle timeout (`URLError.timedOut`, bare or mapped).
    private static func isTransportTimeout(_ error: any Error) -> Bool {
        if let error = error as? URLError { return error.code == .timedOut }
        if case .timedOut(let underlying?)? = error as? NetworkError { return underlying.code == .timedOut }
        return false
    }

    /// Whether the caller accepts `statusCode` (``statusValidation``): the one check the client,
    /// the validators and the retry interceptor share.
    package func accepts(statusCode: Int) -> Bool { statusValidation.accepts(statusCode) }

    /// The call's streamed request body, attached afresh to every send by the pipeline's last step;
    /// `nil` for in-memory bodies (`URLRequest.httpBody`), which are re-sent as they are. Set once,
    /// by the client while it builds the request (before the pipeline runs).
    package var bodyStream: BodyStream? { state.withLock { $0.bodyStream } }

    /// Takes the request's streamed body out of the request (see ``bodyStream``).
    package func attachBodyStream(_ stream: BodyStream) { state.withLock { $0.bodyStream = stream } }

    /// Retries performed so far (`attempt - 1`, never negative).
    package var retryCount: Int { max(0, attempt - 1) }

    /// Time elapsed since ``startedAt``.
    public var elapsed: Duration { ContinuousClock.now - startedAt }

    /// Runs `body` on the call's redirect mode under the context's lock.
    func withRedirectMode<R>(_ body: (inout RedirectMode) -> R) -> R {
        state.withLock { body(&$0.redirectMode) }
    }

    /// The environment's pins when the client's transport does not enforce them, set by the
    /// client before the pipeline runs: the redirect step refuses every hop to a host they pin
    /// (``PinningFailure/transportIgnoresPins(host:)``), as the client refused the first URL.
    var unenforcedPins: PinningPolicy? {
        get { state.withLock { $0.unenforcedPins } }
        set { state.withLock { $0.unenforcedPins = newValue } }
    }

    /// Runs `body` on the decoding step's actions under the context's lock (`body` must not
    /// touch this context).
    func withDecodingHooks<R>(_ body: (inout DecodingHooks?) -> R) -> R {
        state.withLock { body(&$0.decodingHooks) }
    }

    /// Runs `body` on the call's records under the context's lock (`body` must not touch this
    /// context).
    func withRecords<R>(_ body: (inout CallRecords) -> R) -> R {
        state.withLock { body(&$0.records) }
    }

    /// The client's event monitors, in a field of their own: the check every step makes when the
    /// client has none is one lock, no lookup.
    package var eventMonitors: [any NetworkEventMonitor]? {
        get { state.withLock { $0.eventMonitors } }
        set { state.withLock { $0.eventMonitors = newValue } }
    }

    /// Sets the client's event monitors and the redactor that hides secrets in the URLs their
    /// events carry (the client's, with its extra names and patterns).
    package func setEventMonitors(_ monitors: [any NetworkEventMonitor], redactor: Redactor) {
        // A call without a template of its own is named by its path, whose identifier segments
        // (a token, an account number) events must not carry: scrubbed as metrics scrub it.
        let template = pathTemplateIsDefault ? MetricsPathTemplate.scrubbing(pathTemplate) : pathTemplate
        state.withLock {
            $0.eventMonitors = monitors
            $0.eventRedactor = redactor
            $0.eventPathTemplate = template
        }
    }

    /// The monitors and the path template their events carry, read together.
    var eventTargets: (monitors: [any NetworkEventMonitor], pathTemplate: String)? {
        state.withLock { state in
            guard let monitors = state.eventMonitors, !monitors.isEmpty else { return nil }
            return (monitors, state.eventPathTemplate ?? pathTemplate)
        }
    }

    /// `url` redacted by the client's redactor (the default ``Redactor`` when the client set no
    /// monitors): for the URLs events carry.
    package func redactedForEvents(_ url: URL) -> String {
        (state.withLock { $0.eventRedactor } ?? Redactor()).redact(url: url)
    }

    /// Reads or writes the slot `key`; `nil` when nothing was stored.
    public subscript<Key: RequestContextKey>(key: Key.Type) -> Key.Value? {
        get { state.withLock { $0.values[ObjectIdentifier(key)] as? Key.Value } }
        set { state.withLock { $0.store(newValue, at: ObjectIdentifier(key)) } }
    }

    /// The value in slot `key`, storing `make()` first when the slot is empty (one lock, and
    /// nothing made when a value is there).
    func value<Key: RequestContextKey>(for key: Key.Type, orInsert make: () -> Key.Value) -> Key.Value {
        state.withLock { state in
            if let value = state.values[ObjectIdentifier(key)] as? Key.Value { return value }
            let value = make()
            state.store(value, at: ObjectIdentifier(key))
            return value
        }
    }

    /// Atomically updates the slot `key`, starting from `initial` when it is empty.
    ///
    /// `body` runs while the context's lock is held: it must not read or write this context
    /// (read ``attempt`` or other slots before calling `update`), or it deadlocks.
    public func update<Key: RequestContextKey>(
        _ key: Key.Type, default initial: Key.Value, _ body: (inout Key.Value) -> Void
    ) {
        state.withLock { state in
            var value = state.values[ObjectIdentifier(key)] as? Key.Value ?? initial
            body(&value)
            state.store(value, at: ObjectIdentifier(key))
        }
    }
}

extension RequestContext: CustomReflectable {
    /// What `dump(_:)` and the debugger show of a call's context — through a ``Response`` too:
    /// the request ID, method, path template (identifier segments of a call without one scrubbed,
    /// as metrics show it), attempt and idempotency key. Never its locked state, which holds the
    /// request last handed to the transport with the `Authorization` the auth step added.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "requestID": requestID.description, "method": method.rawValue,
                "pathTemplate": pathTemplateIsDefault ? MetricsPathTemplate.scrubbing(pathTemplate) : pathTemplate,
                "attempt": attempt, "idempotencyKey": idempotencyKey as Any,
            ], displayStyle: .class)
    }
}
