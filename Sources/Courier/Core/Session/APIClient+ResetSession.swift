extension APIClient {
    /// Logs the account out of the network layer: clears everything the client and the given
    /// participants hold for it, so the next account starts clean.
    ///
    /// Resets the pipeline's interceptors and the transport that conform to ``SessionResettable``,
    /// stage by stage (``SessionResettable/sessionResetStage``): first ``SessionResetStage/signOut``
    /// (every ``AuthInterceptor``, so no request started during the reset still carries the old
    /// token and refills what is cleared next), then ``SessionResetStage/connections`` (the
    /// transport: for ``URLSessionTransport`` every cookie in its private cookie storage, its
    /// credentials and its connections), then ``SessionResetStage/storedState`` (a cache's
    /// partition of this account); then `participants` (token stores, snapshot stores, a
    /// ``HARRecorder`` via ``SessionResetAction``, your own stores).
    /// Every participant is attempted even when one fails.
    ///
    /// Call it before signing the next user in; requests still running may finish with the old
    /// state. A client built for an `EnvironmentSet` resets the session of the set's current
    /// environment only (every environment has its own).
    ///
    /// - Parameter participants: Additional state to clear, e.g. the token store.
    /// - Throws: ``SessionResetError`` naming the participants that could not be reset.
    public func resetSession(also participants: [any SessionResettable] = []) async throws {
        try await Courier.resetSession(of: Self.sessionParticipants(of: configuration) + participants)
    }

    /// The session state of one configuration in reset order: the interceptors and the transport
    /// that conform to ``SessionResettable``, by ``SessionResettable/sessionResetStage`` (sign-out,
    /// connections, stored state), in pipeline order within a stage (the transport last).
    package static func sessionParticipants(of configuration: Configuration) -> [any SessionResettable] {
        let members: [any Sendable] = configuration.interceptors + [configuration.transport]
        let all = members.compactMap { $0 as? any SessionResettable }
        return all.enumerated()
            .sorted { ($0.element.sessionResetStage, $0.offset) < ($1.element.sessionResetStage, $1.offset) }
            .map(\.element)
    }
}
