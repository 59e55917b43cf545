import Foundation

extension APIClient {
    /// The redactor of the current lane's logging interceptor (Courier's defaults without one),
    /// for the snippets of errors that features outside the core report.
    package var laneRedactor: Redactor { routing.lane.redactor }

    /// The lane one call runs on from start to end (an environment switch meanwhile does not move
    /// it) and the environment it is sent to.
    ///
    /// - Throws: ``EnvironmentMismatch`` when `requiredEnvironment` names another environment
    ///   than that one: the call is not sent.
    func callLane(requiredEnvironment: String?) throws -> (lane: ClientLane, environment: APIEnvironment) {
        let lane = routing.lane
        let environment = lane.environment.current
        if let requiredEnvironment, environment.id != requiredEnvironment {
            throw EnvironmentMismatch(required: requiredEnvironment, current: environment.id)
        }
        return (lane, environment)
    }

    /// The URL `endpoint` is sent to in the current environment, as the request builder makes it.
    ///
    /// - Throws: ``NetworkError/invalidRequest(_:)`` when the path or query cannot form a URL.
    package func url<E: Endpoint>(for endpoint: E) throws -> URL {
        let lane = routing.lane
        return try lane.builder.makeURL(for: endpoint, environment: lane.environment.current)
    }

    /// Checks that `tokenManager` may sign a transfer the system sends for this client outside
    /// its pipeline (background uploads and downloads): it must be one the current environment's
    /// pipeline authenticates with, or the pipeline must have none. A manager given for another
    /// environment — the client's set switched since — would send that environment's access
    /// token to this one's servers.
    ///
    /// - Throws: ``NetworkError/invalidRequest(_:)`` naming the current environment.
    package func checkSigning(with tokenManager: TokenManager) throws {
        let lane = routing.lane
        guard lane.tokenManagers.isEmpty || lane.tokenManagers.contains(where: { $0 === tokenManager }) else {
            throw NetworkError.invalidRequest(
                "the token manager of this transfer is not the one environment '\(lane.environment.current.id)' "
                    + "authenticates with (the environment changed since it was given): no token of another "
                    + "environment is sent")
        }
    }
}
