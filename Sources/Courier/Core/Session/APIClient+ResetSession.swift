extension APIClient {
    /// Logs the account out of the network layer: clears everything the client and the given
    /// participants hold for it, so the next account starts clean.
    ///
    /// Resets, in order: every ``AuthInterceptor`` of the pipeline first (signing out, so no request
    /// started during the reset still carries the old token and refills what is cleared next),
    /// then the client's transport (for ``URLSessionTransport``: every cookie in its private cookie
    /// storage, its credentials, and its connections), the other interceptors that conform to
    /// ``SessionResettable`` (a cache's partition of this account), then `participants` (token
    /// stores, snapshot stores, a ``HARRecorder`` via ``SessionResetAction``, your own stores).
    /// Every participant is attempted even when one fails.
    ///
    /// Call it before signing the next user in; requests still running may finish with the old
    /// state. A client built for an ``EnvironmentSet`` resets the session of the set's current
    /// environment only (every environment has its own).
    ///
    /// - Parameter participants: Additional state to clear, e.g. the token store.
    /// - Throws: ``SessionResetError`` naming the participants that could not be reset.
    public func resetSession(also participants: [any SessionResettable] = []) async throws {
        try await Courier.resetSession(of: Self.sessionParticipants(of: configuration) + participants)
    }

    /// The session state of one configuration, in reset order: auth interceptors, the transport,
    /// the other resettable interceptors.
    static func sessionParticipants(of configuration: Configuration) -> [any SessionResettable] {
        var all: [any SessionResettable] = configuration.interceptors.compactMap { $0 as? AuthInterceptor }
        if let transport = configuration.transport as? any SessionResettable { all.append(transport) }
        all += configuration.interceptors.filter { !($0 is AuthInterceptor) }.compactMap { $0 as? any SessionResettable }
        return all
    }
}
