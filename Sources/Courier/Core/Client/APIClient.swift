import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends endpoints: builds the `URLRequest`, runs the interceptor pipeline under the call's total
/// deadline, validates the status and the body, and decodes the response.
///
/// One client per API (and per signed-in account); keep it for the app's lifetime — it owns one
/// `URLSession`. Every error it throws is a ``NetworkError``.
///
/// ```swift
/// let client = APIClient(environment: .init(name: "production", baseURL: URL(string: "https://api.example.com")!))
/// let item = try await client.send(GetItem(id: 42))
/// let items: [Item] = try await client.get("/items", query: ["status": "active"])
/// ```
public final class APIClient: Sendable {
    /// Everything a client is made of. Build one, adjust fields, pass it to ``APIClient/init(configuration:)``.
    public struct Configuration: Sendable {
        /// Where requests go; switchable later with ``APIClient/switchEnvironment(to:)``.
        public var environment: APIEnvironment
        /// What sends the bytes: a ``URLSessionTransport`` by default, a ``PinningTransport`` with
        /// the environment's ``APIEnvironment/pins`` when it has some. A transport set here must
        /// enforce those pins itself (see ``PinningFailure/transportIgnoresPins(host:)``).
        public var transport: any Transport
        /// The pipeline, outermost first (see <doc:ThePipeline>). Default:
        /// ``Swift/Array/standard(tokenManager:cache:logger:redactor:recorders:metrics:retry:)``
        /// with no arguments — request IDs, retries and idempotency keys. A call whose policy needs
        /// an interceptor this array lacks fails with ``NetworkError/missingInterceptor(_:)``.
        public var interceptors: [any Interceptor]
        /// The shared decoder: `JSONDecoder.DateDecodingStrategy.flexibleISO8601` dates.
        public var decoder: JSONDecoder
        /// The shared encoder: ISO 8601 dates with fractional seconds, sorted keys.
        public var encoder: JSONEncoder
        /// Encodes `Encodable` queries and form bodies.
        public var queryEncoder: URLQueryEncoder
        /// Checks run on every accepted, non-raw response as it arrives from the transport, inside
        /// the pipeline (so a ``RetryableError`` is retried and a rejected response is never cached).
        public var validators: [any ResponseValidator]
        /// Header fields sent with every request (the endpoint's own headers win).
        public var headers: HTTPHeaders
        /// The clock that measures deadlines; injectable for tests.
        public var clock: any Clock<Duration>
        /// What a redirect to another origin keeps (``RedirectPolicy``): by default no
        /// secret-bearing header field, and no `https` → `http` hop.
        public var redirects: RedirectPolicy = .default
        /// Receive every call's lifecycle events (``NetworkEventMonitor``); none by default.
        public var eventMonitors: [any NetworkEventMonitor] = []
        /// What the current network path costs, asked before each call whose
        /// ``EndpointPolicy/networkAccess`` forbids expensive or constrained networks; `nil` (the
        /// default) leaves that to the system (Apple) or to nothing (Linux). See ``NetworkAccess``.
        public var networkPath: (any NetworkPathMonitoring)?
        /// The most body bytes a buffered call (`send(_:)`, `response(for:)`, the `get`/`post`
        /// shortcuts, GraphQL, uploads) holds in memory, counted after content decoding; 64 MiB by
        /// default, `nil` for no limit. A body that grows past it stops the transfer at once and
        /// fails the call with ``NetworkError/responseTooLarge(limit:)``, so a server cannot make
        /// the app hold gigabytes (a 1 MiB gzip body of zeros inflates to 1 GiB). Streamed calls
        /// and downloads are bounded by ``StreamingOptions`` instead. The built-in transports
        /// enforce it; a transport of your own reads it as ``TransportReporter/maximumBodySize``.
        public var maximumResponseBodySize: Int? = 64 << 20

        /// A configuration with Courier's defaults for `environment`.
        public init(environment: APIEnvironment) {
            self.environment = environment
            self.transport = environment.pins.map { PinningTransport(policy: $0) } ?? URLSessionTransport()
            self.interceptors = .standard()
            self.decoder = APIClient.makeDecoder()
            self.encoder = APIClient.makeEncoder()
            self.queryEncoder = URLQueryEncoder()
            self.validators = []
            self.headers = HTTPHeaders()
            self.clock = ContinuousClock()
        }
    }

    /// The configuration the client was created with (the environment may since have changed).
    /// For a client built for an `EnvironmentSet`: the configuration of the set's current
    /// environment (each environment has its own, see `init(environments:api:configure:)` (CourierEnvironments)).
    public var configuration: Configuration { routing.lane.configuration }
    package let routing: ClientRouting

    /// Creates a client.
    public init(configuration: Configuration) {
        self.routing = .single(ClientLane(configuration: configuration))
    }

    /// Creates a client that routes every call to one of several lanes.
    package init(routing: ClientRouting) {
        self.routing = routing
    }

    /// Creates a client with default configuration for `environment`, optionally adjusted by `configure`.
    public convenience init(environment: APIEnvironment, configure: (inout Configuration) -> Void = { _ in }) {
        var configuration = Configuration(environment: environment)
        configure(&configuration)
        self.init(configuration: configuration)
    }

    /// The environment requests currently go to.
    public var environment: APIEnvironment { routing.lane.environment.current }

    /// Points every later request at `environment`. Calls already running keep their URL and
    /// their token.
    ///
    /// A plain client takes `environment` as it is (its base URLs and headers) and keeps its
    /// configuration. When one of `environment`'s base URLs is on an origin (scheme, host, port)
    /// none of the current environment's base URLs is on, the switch first signs out — it resets
    /// the pipeline's ``SessionResetStage/signOut`` participants (every ``AuthInterceptor`` signs
    /// out of its ``TokenManager``, clearing its store; a refresh in flight is abandoned) — so no
    /// token obtained on one server is ever sent to another: a call started after the switch that
    /// needs a token fails with ``NetworkError/signedOut`` until someone signs in again. A switch
    /// to the same origins (another path, other headers) keeps the session. A ``TokenManager``
    /// shared with other clients is signed out for them too. Its ``RefreshTokenGrant`` is not
    /// changed: once the client has left the environment it was made with, a refresh whose token
    /// endpoint is on an origin of that environment is refused (``NetworkError/invalidRequest(_:)``,
    /// nothing sent), so the refresh token of someone signed in on the new server never reaches the
    /// old one — give the grant a URL that follows ``environment``, or use an `EnvironmentSet`.
    ///
    /// The transport is kept: calls to hosts the new environment pins are refused
    /// (``PinningFailure/transportIgnoresPins(host:)``) unless that transport enforces its pins, and
    /// the transport's cookies and connections stay too (cookies do not isolate by port: two
    /// environments on one host see each other's; call ``resetSession(also:)`` to clear them).
    /// Use an `EnvironmentSet` when environments must keep their sessions apart.
    ///
    /// A client built for an `EnvironmentSet` switches the whole set to the environment with
    /// `environment`'s ``APIEnvironment/id`` — exactly `EnvironmentSet.switchEnvironment(to:)`:
    /// every client of the set follows, the choice is remembered, and each environment keeps its
    /// own session state (tokens, cookies, cache), so nobody is signed out.
    ///
    /// - Throws: For a plain client, ``SessionResetError`` when a sign-out participant failed (a
    ///   token store that could not be cleared): the environment is then not switched, and the
    ///   participants that did sign out stay signed out (an ``AuthInterceptor``'s token manager
    ///   is signed out in memory even when its store fails). For a client built for a set: what
    ///   `EnvironmentSet.switchEnvironment(to:)` throws
    ///   (``EnvironmentError/switchingForbidden(current:channel:)``,
    ///   ``EnvironmentError/unknownEnvironment(_:known:)``, …).
    public func switchEnvironment(to environment: APIEnvironment) async throws {
        switch routing {
        case .single(let lane):
            if !Self.sharesOrigins(environment, with: lane.environment.current) {
                // Before the new environment takes effect: a call started once it has finds no token.
                let signOut = Self.sessionParticipants(of: lane.configuration).filter { $0.sessionResetStage == .signOut }
                try await Courier.resetSession(of: signOut)
            }
            lane.environment.set(environment)
        case .environments(let set, _): try await set.switchEnvironment(to: environment.id)
        }
    }

    /// Whether every base URL of `next` is on an origin (RFC 6454 §4) of one of `current`'s: a
    /// plain client's switch from `current` to `next` may keep its session.
    static func sharesOrigins(_ next: APIEnvironment, with current: APIEnvironment) -> Bool {
        next.baseURLs.values.allSatisfy(current.isOrigin(of:))
    }

    // MARK: Sending

    /// Sends `endpoint` and returns its decoded response.
    ///
    /// - Throws: ``NetworkError``: the case for the status when it is not accepted; ``NetworkError/timedOut(_:)``
    ///   when ``EndpointPolicy/deadline`` passes; ``NetworkError/cancelled`` when the task is cancelled;
    ///   ``NetworkError/decoding(_:)`` when the body does not fit `E.Response`.
    public func send<E: Endpoint>(_ endpoint: E) async throws -> E.Response {
        try await response(for: endpoint).value
    }

    /// Sends a ``Request`` value; allows `client.send(.get("/items"))`.
    public func send<Value>(_ request: Request<Value>) async throws -> Value {
        try await response(for: request).value
    }

    /// Sends `endpoint` and returns the decoded value together with the HTTP response and the call's context.
    /// - Throws: See ``send(_:)-(E)``.
    public func response<E: Endpoint>(for endpoint: E) async throws -> Response<E.Response> {
        try await response(for: endpoint, requiredEnvironment: nil)
    }

    /// ``response(for:)-(E)``, sent only while the client points at the environment named
    /// `requiredEnvironment` (else ``EnvironmentMismatch``, nothing sent) and, with
    /// `requiredSignIn`, only with a token of that account (else ``SignInMismatch``, nothing sent).
    /// For Courier's modules.
    package func response<E: Endpoint>(
        for endpoint: E, requiredEnvironment: String?, requiredSignIn: SignInRequirement? = nil
    ) async throws -> Response<E.Response> {
        let context = RequestContext(for: endpoint)
        return try await response(
            for: endpoint, context: context, requiredEnvironment: requiredEnvironment, requiredSignIn: requiredSignIn)
    }

    /// Sends `endpoint` under a context Courier's own modules built (a call on behalf of another
    /// one). The pipeline follows the context's policy, so it must be the endpoint's.
    ///
    /// With `requiredEnvironment`, the call is sent only when the environment it would go to is
    /// the one of that ``APIEnvironment/name`` (checked once the call's lane and environment are
    /// fixed, so a switch cannot slip between the check and the send); otherwise it throws
    /// ``EnvironmentMismatch`` before anything is sent. The offline queue's way to never deliver a
    /// mutation to an environment it was not made in.
    ///
    /// With `requiredSignIn`, the ``AuthInterceptor`` attaches a token only of the account the
    /// requirement names (``SignInRequirement``); otherwise the call throws ``SignInMismatch``
    /// and nothing is sent. The offline queue's way to never send a mutation with another
    /// account's token.
    package func response<E: Endpoint>(
        for endpoint: E, context: RequestContext, requiredEnvironment: String? = nil,
        requiredSignIn: SignInRequirement? = nil
    ) async throws -> Response<E.Response> {
        let (lane, environment) = try callLane(requiredEnvironment: requiredEnvironment)
        if let requiredSignIn { context[SignInRequirementKey.self] = requiredSignIn }
        let monitors = lane.configuration.eventMonitors
        let policy = endpoint.policy  // a protocol requirement: read once
        if !monitors.isEmpty {
            context.setEventMonitors(monitors, redactor: lane.redactor)
            context.emit(.callStarted)
        }
        do {
            let request = try prepareRequest(for: endpoint, context: context, lane: lane, environment: environment)
            if !monitors.isEmpty { context.emit(.requestPrepared(url: request.url.map(lane.redactor.redact(url:)) ?? "")) }
            context.expectDecoding()
            let http = try await withDeadline(policy.deadline, context: context, deadlines: lane.deadlines) {
                [request] in
                try await lane.pipeline.send(request, context: context)
            }
            let value = try accept(http, for: endpoint, context: context, lane: lane)
            context.finishDecoding(failure: nil)
            if policy.minimumDuration != nil { try await holdForMinimumDuration(policy, context: context) }
            if !monitors.isEmpty { context.emit(.callEnded(statusCode: http.statusCode)) }
            return Response(value: value, response: http, context: context)
        } catch {
            let failure = networkError(error, decoding: E.Response.self, redactor: lane.redactor)
            if case .decoding = failure { context.finishDecoding(failure: failure) } else { context.finishDecoding(failure: nil) }
            if !monitors.isEmpty { Self.emitEnd(of: failure, context: context) }
            // A call that ended for want of a token (the token endpoint failing, its refreshes held
            // back) says nothing of the API's own state.
            if context[AuthStepFailureKey.self] != true {
                for observer in lane.failureObservers { observer.callFailed(failure) }
            }
            if !failure.isCancellation, policy.minimumDuration != nil {
                try? await holdForMinimumDuration(policy, context: context)
            }
            if context[SignInMismatchKey.self] == true { throw SignInMismatch() }
            throw failure
        }
    }

    /// The events that end a failed call: decoding failure, cancellation or failure.
    private static func emitEnd(of failure: NetworkError, context: RequestContext) {
        let kind = ErrorRecord.kind(of: failure)
        if case .decoding = failure { context.emit(.decodingFailed(errorKind: kind)) }
        if failure.isCancellation { context.emit(.cancelled) }
        context.emit(.callFailed(errorKind: kind))
    }

    /// Checks the pipeline can keep the policy's promises, builds the request and moves a body
    /// stream into the context (the pipeline's last step attaches it afresh to every send).
    ///
    /// - Throws: ``NetworkError/missingInterceptor(_:)``, ``NetworkError/invalidRequest(_:)``,
    ///   ``NetworkError/networkUnavailable(_:)``; a `URLError` carrying
    ///   ``PinningFailure/transportIgnoresPins(host:)`` for a host the environment pins when the
    ///   lane's transport does not enforce those pins.
    func prepareRequest<E: Endpoint>(
        for endpoint: E, context: RequestContext, lane: ClientLane, environment: APIEnvironment? = nil
    ) throws -> URLRequest {
        if let missing = context.policy.missingCapability(in: lane.capabilities) {
            throw NetworkError.missingInterceptor(missing)
        }
        context.redirectMode = endpoint.options.redirects
        let access = context.policy.networkAccess
        if access != .unrestricted, let refusal = access.refusal(on: lane.configuration.networkPath?.currentPath) {
            throw NetworkError.networkUnavailable(refusal)
        }
        let environment = environment ?? lane.environment.current
        var request = try lane.builder.makeRequest(
            for: endpoint, environment: environment,
            requestID: lane.requestIDHeader.map { HTTPHeaders.Field(name: $0, value: context.requestID.description) })
        if let pins = environment.pins, !pins.isEnforced(by: lane.configuration.transport) {
            context.unenforcedPins = pins  // the redirect step refuses pinned hosts too
            try pins.refuseUnenforced(request.url)
        }
        if access != .unrestricted { PlatformAdapters.networkAccess.mark(&request, with: access) }
        if case .stream(let stream, _) = endpoint.body {
            context.attachBodyStream(stream)
        } else if let stream = request.httpBodyStream {
            // Set by a request modifier: it can be read once, so it is never re-sent.
            context.attachBodyStream(.once(stream))
            request.httpBodyStream = nil
        }
        return request
    }

    /// Maps what the pipeline threw; a validator's own error becomes a decoding failure.
    private func networkError<T>(_ error: any Error, decoding type: T.Type, redactor: Redactor) -> NetworkError {
        if let failure = error as? ValidationFailure {
            if let error = failure.underlying as? NetworkError { return error }
            var decoding = DecodingFailure(
                underlying: failure.underlying, codingPath: "<root>", typeName: "\(T.self)", response: failure.response,
                redactor: redactor)
            decoding.kind = .rejectedByValidator
            return .decoding(decoding)
        }
        return NetworkError(error)
    }

    /// Waits until the call has taken at least ``EndpointPolicy/minimumDuration``.
    private func holdForMinimumDuration(_ policy: EndpointPolicy, context: RequestContext) async throws {
        guard let minimum = policy.minimumDuration else { return }
        let remaining = minimum - context.elapsed
        if remaining > .zero { try await configuration.clock.sleep(for: remaining) }
    }

    /// Runs `operation` in a child task and fails with ``NetworkError/timedOut(_:)`` when `timeout`
    /// passes first: the deadline cancels the task, which cancels its `URLSessionTask`. Cancelling
    /// the caller cancels the task too.
    ///
    /// Request body progress postpones the deadline (``CallDeadline``): `timeout` counts from the
    /// later of now and the last body bytes the transport reported sent.
    func withDeadline<T: Sendable>(
        _ timeout: Duration, context: RequestContext, deadlines: any DeadlineScheduling,
        _ operation: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        // The operation runs in a new task, which does not inherit the caller's cancellation.
        try Task.checkCancellation()
        context.bindDeadlineClock(deadlines, timeout: timeout)  // before the operation can report body progress
        let task: Task<T, any Error>
        #if compiler(>=6.2)  // Task.immediate (SE-0472) first ships with Swift 6.2.
        if #available(macOS 26, iOS 26, tvOS 26, watchOS 26, visionOS 26, *) {
            // Starts on the caller's thread and runs until its first suspension (the network
            // wait), saving a thread hop per call — measurable CPU on small requests.
            task = Task.immediate { try await operation() }
        } else {
            task = Task { try await operation() }
        }
        #else
        task = Task { try await operation() }
        #endif
        let deadline = CallDeadline(timeout: timeout, context: context, deadlines: deadlines) {
            context.markDeadlineExpired()
            task.cancel()
        }
        defer { deadline.cancel() }
        do {
            return try await task.valueCancelledWithCaller
        } catch {
            if Task.isCancelled { throw error }
            throw context.mappingDeadline(error)
        }
    }

    private func accept<E: Endpoint>(
        _ http: HTTPResponse, for endpoint: E, context: RequestContext, lane: ClientLane
    ) throws -> E.Response {
        // The endpoint's own acceptance: a module's endpoint may accept more than the context its
        // layers see (GraphQL reads every status's body, yet lets the retry step repeat a 503).
        guard endpoint.statusValidation.accepts(http.statusCode) || context.isStoppedRedirect(http) else {
            throw NetworkError(
                response: http, knownErrors: endpoint.knownErrors, redactor: lane.redactor,
                request: context.lastSentRequest)
        }
        let decodingContext = ResponseDecodingContext(
            method: endpoint.method, decoder: endpoint.options.decoder ?? lane.configuration.decoder)
        if let check = endpoint.options.checkResponse {
            do {
                try check(http)
            } catch let error as NetworkError {
                throw error
            } catch {
                var failure = DecodingFailure(
                    underlying: error, codingPath: "<root>", typeName: "\(E.Response.self)", response: http,
                    redactor: lane.redactor, request: context.lastSentRequest)
                failure.kind = .rejectedByValidator
                throw NetworkError.decoding(failure)
            }
        }
        do {
            return try endpoint.decode(http, context: decodingContext)
        } catch let error as NetworkError {
            throw error
        } catch {
            let path = (error as? DecodingError)?.codingPathDescription ?? "<root>"
            throw NetworkError.decoding(
                DecodingFailure(
                    underlying: error, codingPath: path, typeName: "\(E.Response.self)", response: http,
                    redactor: lane.redactor, request: context.lastSentRequest))
        }
    }

    // MARK: Coders

    /// The decoder Courier configures by default: flexible ISO 8601 dates (fractional seconds,
    /// offsets, date-only), keys as sent.
    public static func makeDecoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .flexibleISO8601
        return decoder
    }

    /// The encoder Courier configures by default: ISO 8601 dates with fractional seconds in UTC,
    /// sorted keys (stable bodies for signatures, caches and tests).
    public static func makeEncoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601WithFractionalSeconds
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}

/// A decoded value together with the response it came from and the call's context.
public struct Response<Value: Sendable>: Sendable {
    /// The decoded value.
    public let value: Value
    /// The HTTP response (status, headers, body).
    public let response: HTTPResponse
    /// The call's context: request ID, attempts, and the slots interceptors filled.
    public let context: RequestContext

    /// The status code.
    public var statusCode: Int { response.statusCode }

    /// A value with the response it was decoded from and the call's context.
    package init(value: Value, response: HTTPResponse, context: RequestContext) {
        self.value = value
        self.response = response
        self.context = context
    }
}
