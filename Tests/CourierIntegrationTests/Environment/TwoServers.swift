import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierEnvironments

/// An environment set over the two reference server instances that `scripts/test` starts:
/// development and staging on the first (`COURIER_API_URL`, two namespaces), production on the
/// second (`COURIER_API2_URL`) — so staging and production are different processes on different
/// ports of the same host, as cookies see them (RFC 6265 §8.5: cookies do not isolate by port).
struct TwoServers {
    let namespace: String
    let first: URL
    let second: URL

    init(namespace: String = TestServers.makeNamespace("env")) throws {
        self.namespace = namespace
        first = try TestServers.apiURL()
        second = try TestServers.api2URL()
    }

    /// The base URL `root/ns/<namespace>`.
    static func base(_ root: URL, _ namespace: String) -> URL {
        root.appendingPathComponent("ns").appendingPathComponent(namespace)
    }

    var environments: [APIEnvironment] {
        get throws {
            [
                try APIEnvironment("development", baseURL: Self.base(first, namespace + "-dev")),
                try APIEnvironment("staging", baseURL: Self.base(first, namespace)),
                try APIEnvironment("production", baseURL: Self.base(second, namespace)),
            ]
        }
    }

    func set(
        channel: BuildChannel = .testFlight, override: EnvironmentOverride? = nil,
        store: any EnvironmentChoiceStore = InMemoryEnvironmentChoiceStore(),
        sessionsOnSwitch: SessionsOnSwitch = .kept
    ) throws -> EnvironmentSet {
        try EnvironmentSet(
            environments: environments, build: BuildChannelReading(channel, evidence: "integration test"),
            sessionsOnSwitch: sessionsOnSwitch, store: store, override: override)
    }

    /// What the server at `root` logged in this namespace, oldest first.
    func log(_ root: URL) async throws -> [LoggedRequest] {
        let url = Self.base(root, namespace).appendingPathComponent("_requests")
        let (data, _) = try await URLSession.shared.data(from: url)
        struct Log: Decodable { var requests: [LoggedRequest] }
        return try JSONDecoder().decode(Log.self, from: data).requests
    }

    var staging: URL { first }
    var production: URL { second }
}
