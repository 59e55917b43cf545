/// What the client takes from an interceptor of its pipeline when it assembles a lane (see
/// `ClientLane`): every requirement has a neutral default, so a built-in implements only what it
/// carries. Reached through this protocol, never by naming a concrete interceptor.
package protocol LaneParticipant: Interceptor {
    /// The redactor for error snippets and for the header fields dropped on a cross-origin
    /// redirect: the first one in the pipeline wins (``LoggingInterceptor``).
    var laneRedactor: Redactor? { get }

    /// The request-ID header field the request builder fills in directly when this interceptor is
    /// the first of the pipeline (``RequestIDInterceptor``): one header write fewer per call.
    var requestIDHeaderName: String? { get }

    /// Offers the client's transport and deadline clock, for a participant that sends requests of
    /// its own (a ``TokenManager`` without a transport refreshes through its client's, and times
    /// its refresh on the client's clock).
    func adoptLaneTransport(_ transport: any Transport, clock: any Clock<Duration>)

    /// Whether the client tells this participant how each failed call ended
    /// (``callFailed(_:)``), wherever it sits in the pipeline.
    var observesCallFailures: Bool { get }

    /// A call of the client failed with `failure`, also one refused before reaching this
    /// interceptor (an open circuit breaker outside it answers `backendUnavailable` and sends
    /// nothing).
    func callFailed(_ failure: NetworkError)

    /// Offers the lane's current environment (read when needed: a plain client's environment can
    /// change), for a participant that sends requests of its own: a ``TokenManager`` refreshing
    /// through a transport of its own must not reach a pinned host unpinned, nor send a refresh
    /// token to the token endpoint of an environment the client has left.
    func adoptLaneEnvironment(_ environment: @escaping @Sendable () -> APIEnvironment)

    /// The token manager this participant authenticates the lane's calls with
    /// (``AuthInterceptor``): what transfers sent outside the pipeline must sign with.
    var laneTokenManager: TokenManager? { get }

    /// Offers the token managers the lane authenticates with (its participants'
    /// ``laneTokenManager``s), for a participant whose state must not outlive a sign-in (the
    /// `DeduplicationInterceptor` never shares a request across two).
    func adoptLaneTokenManagers(_ managers: [TokenManager])
}

extension LaneParticipant {
    package var laneRedactor: Redactor? { nil }
    package var requestIDHeaderName: String? { nil }
    package func adoptLaneTransport(_ transport: any Transport, clock: any Clock<Duration>) {}
    package var observesCallFailures: Bool { false }
    package func callFailed(_ failure: NetworkError) {}
    package var laneTokenManager: TokenManager? { nil }
    package func adoptLaneEnvironment(_ environment: @escaping @Sendable () -> APIEnvironment) {}
    package func adoptLaneTokenManagers(_ managers: [TokenManager]) {}
}

extension LoggingInterceptor: LaneParticipant {
    package var laneRedactor: Redactor? { redactor }
}

extension RequestIDInterceptor: LaneParticipant {
    package var requestIDHeaderName: String? { headerName }
}

extension AuthInterceptor: LaneParticipant {
    package func adoptLaneTransport(_ transport: any Transport, clock: any Clock<Duration>) {
        tokenManager.adoptTransport(transport, clock: clock)
    }
    package var laneTokenManager: TokenManager? { tokenManager }
    package func adoptLaneEnvironment(_ environment: @escaping @Sendable () -> APIEnvironment) {
        tokenManager.adoptEnvironment(environment)
    }
}
