import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension APIClient {
    /// Creates a client for `api` that follows `environments`: each call goes to the set's current
    /// environment, and each environment has its own configuration — its own transport (so its own
    /// cookie storage and connections), interceptors (token manager, cache) and base URL.
    ///
    /// `configure` runs once per environment, at once, starting from Courier's defaults for that
    /// environment (a fresh `URLSessionTransport`, or a `PinningTransport` when the environment
    /// has `APIEnvironment.pins`; a transport installed instead must enforce the same pins, or
    /// calls to the pinned hosts fail with `PinningFailure.transportIgnoresPins(host:)`). Build
    /// per-environment state there from the environment it
    /// is given — a token store under `APIEnvironment.storageNamespace`, a cache partition
    /// named after it — never from ``EnvironmentSet/current``, which changes:
    ///
    /// <!-- sample: apple — KeychainTokenStore exists on Apple platforms only -->
    /// ```swift
    /// let tokens = EnvironmentScoped { environment in
    ///     TokenManager(store: KeychainTokenStore(service: "com.example.app", namespace: environment.storageNamespace),
    ///                  grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("oauth/token")))
    /// }
    /// let client = try APIClient(environments: environments) { configuration, environment in
    ///     configuration.interceptors = .standard(tokenManager: tokens[environment],
    ///                                            cache: HTTPCache(storage: disk, partition: { environment.storageNamespace }))
    /// }
    /// ```
    ///
    /// The client refuses configurations in which two environments share session state, which
    /// would let a staging token or cookie reach production: the same `URLSession` or cookie
    /// storage, the same `TokenManager`, the same token store (file path, Keychain item or
    /// in-memory store), or the same cache partition of the same `HTTPCache`.
    ///
    /// `resetSession(also:)` resets the current environment's session. With
    /// ``SessionsOnSwitch/signedOut`` the set resets the left environment of this client on every
    /// switch.
    ///
    /// - Parameters:
    ///   - environments: The set to follow.
    ///   - api: Which of each environment's `APIEnvironment.baseURLs` to use.
    ///   - configure: Adjusts the configuration of each environment.
    /// - Throws: `EnvironmentError.missingBaseURL(environment:api:)` when an environment has no
    ///   base URL for `api`; `EnvironmentError.sharedSessionState(_:)`; whatever `configure` throws.
    public convenience init(
        environments: EnvironmentSet,
        api: String = APIEnvironment.defaultAPI,
        configure: (inout Configuration, APIEnvironment) throws -> Void = { _, _ in }
    ) throws {
        var lanes: [ClientLane] = []
        for environment in environments.environments {
            var configuration = Configuration(environment: try environment.api(api))
            try configure(&configuration, environment)
            lanes.append(ClientLane(configuration: configuration))
        }
        try SessionIsolation.check(zip(environments.environments.map(\.id), lanes.map(\.configuration)))
        self.init(routing: .environments(environments, lanes))
        environments.register { [weak self] index in
            guard let self else { return nil }
            guard let lane = self.routing.lane(at: index) else { return [] }
            do {
                try await Courier.resetSession(of: APIClient.sessionParticipants(of: lane.configuration))
                return []
            } catch let error as SessionResetError {
                return error.failures
            } catch {
                return [SessionResetError.Failure(participant: "client of \(lane.environment.current.id)", error: error)]
            }
        }
    }
}

/// Detects session state shared between environments of one client.
enum SessionIsolation {
    /// - Throws: `EnvironmentError.sharedSessionState(_:)` naming the state and both environments.
    static func check(_ lanes: some Sequence<(String, APIClient.Configuration)>) throws {
        var owners: [String: String] = [:]
        for (id, configuration) in lanes {
            for (key, label) in stateKeys(of: configuration) {
                if let other = owners[key], other != id {
                    throw EnvironmentError.sharedSessionState("environments '\(other)' and '\(id)' share \(label)")
                }
                owners[key] = id
            }
        }
    }

    /// Identities of the session state a configuration holds: those of its interceptors and its
    /// transport that conform to `SessionResettable` (the transport first), as (key, label) pairs.
    static func stateKeys(of configuration: APIClient.Configuration) -> [(String, String)] {
        let members: [any Sendable] = [configuration.transport] + configuration.interceptors
        return members.compactMap { $0 as? any SessionResettable }.flatMap(\.sessionStateIdentities).map { ($0.key, $0.label) }
    }
}
