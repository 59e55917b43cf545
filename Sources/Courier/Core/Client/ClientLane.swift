import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything one call of an ``APIClient`` goes through: the configuration, the pipeline folded
/// over its transport, the request builder, the deadline scheduler and the current
/// ``APIEnvironment``. A plain client has one lane; a client built for an `EnvironmentSet` has
/// one per environment, so each environment keeps its own transport (cookies, connections),
/// interceptors (token manager, cache) and base URL.
package final class ClientLane: Sendable {
    package let configuration: APIClient.Configuration
    let pipeline: Pipeline
    let capabilities: PipelineCapabilities
    /// The logging interceptor's redactor (Courier's defaults without one), for error snippets.
    let redactor: Redactor
    let builder: RequestBuilder
    let deadlines: any DeadlineScheduling
    package let environment: Locked<APIEnvironment>
    /// The header field of the pipeline's outermost ``RequestIDInterceptor``, which the request
    /// builder fills in directly (see `RequestBuilder.makeRequest`); `nil` when the pipeline does
    /// not start with one.
    let requestIDHeader: String?
    /// The participants told of every failed call (``LaneParticipant/callFailed(_:)``); usually none.
    let failureObservers: [any LaneParticipant]
    /// The token managers the pipeline authenticates with (usually one; none without auth).
    package let tokenManagers: [TokenManager]

    package init(configuration: APIClient.Configuration) {
        self.configuration = configuration
        let participants = configuration.interceptors.compactMap { $0 as? any LaneParticipant }
        let redactor = participants.lazy.compactMap(\.laneRedactor).first ?? Redactor()
        let interceptors = Self.withRetries(configuration.interceptors)
        self.pipeline = Pipeline(
            interceptors: interceptors, transport: configuration.transport, validators: configuration.validators,
            redirectRules: RedirectRules(policy: configuration.redirects, secretHeaders: redactor.headers),
            maximumBodySize: configuration.maximumResponseBodySize)
        self.capabilities = interceptors.reduce(into: []) { $0.formUnion($1.capabilities) }
        self.redactor = redactor
        // A token manager without a transport of its own refreshes through its client's (its lane's).
        for participant in participants {
            participant.adoptLaneTransport(configuration.transport, clock: configuration.clock)
        }
        let environment = Locked(configuration.environment)
        for participant in participants { participant.adoptLaneEnvironment { environment.current } }
        self.builder = RequestBuilder(
            encoder: configuration.encoder, queryEncoder: configuration.queryEncoder,
            defaultHeaders: configuration.headers)
        self.deadlines = makeDeadlineScheduler(clock: configuration.clock)
        self.environment = environment
        self.requestIDHeader = (configuration.interceptors.first as? any LaneParticipant)?.requestIDHeaderName
        self.failureObservers = participants.filter(\.observesCallFailures)
        let tokenManagers = participants.compactMap(\.laneTokenManager)
        for participant in participants { participant.adoptLaneTokenManagers(tokenManagers) }
        self.tokenManagers = tokenManagers
    }
}

extension ClientLane {
    /// `interceptors` with a retry step: as they are when one of them has
    /// ``PipelineCapabilities/retries``, else with a default ``RetryInterceptor`` where the
    /// standard pipeline has it — outside the first interceptor that authenticates or adds an
    /// idempotency key, innermost otherwise — so a hand-built pipeline keeps ``EndpointPolicy/retry``
    /// instead of dropping it silently. An endpoint that must not retry says `retry: .none`.
    static func withRetries(_ interceptors: [any Interceptor]) -> [any Interceptor] {
        guard !interceptors.contains(where: { $0.capabilities.contains(.retries) }) else { return interceptors }
        var result = interceptors
        let inner: PipelineCapabilities = [.authentication, .idempotencyKeys]
        let position = interceptors.firstIndex { !$0.capabilities.isDisjoint(with: inner) } ?? interceptors.endIndex
        result.insert(RetryInterceptor(), at: position)
        return result
    }
}

/// What a client that follows a set of environments asks of the set: which environment is
/// current, and a switch of the whole set (`EnvironmentSet` of `CourierEnvironments`).
package protocol EnvironmentRouting: AnyObject, Sendable {
    /// The position of the current environment in the set.
    var currentIndex: Int { get }
    /// Switches the whole set to the environment `id`.
    ///
    /// - Throws: Why the set refuses the switch (an `EnvironmentError`).
    func switchEnvironment(to id: String) async throws
}

/// How a client picks the lane of a call.
package enum ClientRouting: Sendable {
    /// Always the same lane.
    case single(ClientLane)
    /// The lane of the set's current environment; `lanes[i]` serves the set's `i`th environment.
    case environments(any EnvironmentRouting, [ClientLane])

    /// The lane for a call starting now.
    package var lane: ClientLane {
        switch self {
        case .single(let lane):
            return lane
        case .environments(let set, let lanes):
            return lanes[set.currentIndex]
        }
    }

    /// The lane of the environment at `index` of the set (the single lane for a plain client).
    package func lane(at index: Int) -> ClientLane? {
        switch self {
        case .single(let lane):
            return lane
        case .environments(_, let lanes):
            return lanes.indices.contains(index) ? lanes[index] : nil
        }
    }
}
