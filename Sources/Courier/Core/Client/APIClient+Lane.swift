import Foundation

extension APIClient {
    /// The redactor of the current lane's logging interceptor (Courier's defaults without one),
    /// for the snippets of errors that features outside the core report.
    package var laneRedactor: Redactor { routing.lane.redactor }

    /// The URL `endpoint` is sent to in the current environment, as the request builder makes it.
    ///
    /// - Throws: ``NetworkError/invalidRequest(_:)`` when the path or query cannot form a URL.
    package func url<E: Endpoint>(for endpoint: E) throws -> URL {
        let lane = routing.lane
        return try lane.builder.makeURL(for: endpoint, environment: lane.environment.current)
    }
}
