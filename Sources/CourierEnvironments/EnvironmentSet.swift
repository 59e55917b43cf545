import Courier
import Foundation

/// The environments an app can run against, which one is in use, and why.
///
/// Declare the set once at launch; build every client from it with
/// `APIClient.init(environments:api:configure:)`. Every such client follows
/// ``switchEnvironment(to:)`` and keeps each environment's session state (cookies, tokens,
/// cache partition) apart.
///
/// **Decision at launch**, in this order (see ``EnvironmentDecision``):
/// 1. an override for this run — launch argument `-COURIER_ENV staging`, else environment
///    variable `COURIER_ENV=staging` (``EnvironmentOverride``); an unknown name throws;
/// 2. else the choice persisted by an earlier switch (``EnvironmentChoiceStore``); an unknown or
///    unreadable one is skipped and noted;
/// 3. else the build: `BuildChannel` through ``BuildMapping`` — debug → development, Xcode or
///    TestFlight → staging, App Store → production.
///
/// When ``EnvironmentSwitching`` locks this build (by default: App Store builds), steps 1 and 2
/// are skipped (and noted) and switching throws. ``decision`` says what happened; log it.
///
/// ```swift
/// #if DEBUG
/// let isDebug = true
/// #else
/// let isDebug = false
/// #endif
/// let environments = try await EnvironmentSet.detect(
///     environments: [development, staging, production],
///     detector: BuildChannelDetection.platformDefault(isDebugBuild: isDebug),
///     store: EnvironmentChoiceStores.platformDefault(appName: "com.example.app"))
/// print("environment: \(environments.decision)")
/// ```
public final class EnvironmentSet: EnvironmentRouting, Sendable {
    /// The declared environments, in declaration order (the order a debug menu lists them).
    public let environments: [APIEnvironment]
    /// Which environment each build channel uses.
    package let mapping: BuildMapping
    /// Whether this set may leave the environment its build chose.
    package let switching: EnvironmentSwitching
    /// What a switch does to the session of the environment being left.
    package let sessionsOnSwitch: SessionsOnSwitch
    /// How the running app was built, as read at launch.
    public let build: BuildChannelReading

    private let store: any EnvironmentChoiceStore
    private let override: EnvironmentOverride?
    private let state: Locked<State>
    private let broadcaster = EventBroadcaster<EnvironmentDecision>()
    /// Runs switches one at a time, off the cooperative pool.
    private let writer = ChoiceWriter()
    /// The end of the last move (``move(to:decision:persist:)``), sign-out of the left environment
    /// included: the next move starts after it.
    private let lastMove = Locked<Task<Void, Never>?>(nil)
    /// Session resets of the clients built for this set, per environment index; `nil` once the
    /// client is gone (the entry is then dropped).
    private let resetters = Locked<[UUID: @Sendable (Int) async -> [SessionResetError.Failure]?]>([:])

    private struct State: Sendable {
        var index: Int
        var decision: EnvironmentDecision
    }

    /// Creates a set and decides its environment (see the order above).
    ///
    /// - Parameters:
    ///   - environments: The environments, at least one; identifiers and storage namespaces unique.
    ///   - build: How the app was built (from a ``BuildChannelDetecting``; see ``detect(environments:detector:mapping:switching:sessionsOnSwitch:store:override:)``).
    ///   - mapping: Environment per build channel; every identifier it names must be in the set.
    ///   - switching: Whether switching is allowed; locked in App Store builds by default.
    ///   - sessionsOnSwitch: Whether a switch keeps or resets the left environment's session;
    ///     kept by default.
    ///   - store: Where a switch is remembered.
    ///   - override: This run's override; read from the process by default.
    /// - Throws: `EnvironmentError.noEnvironments`, `EnvironmentError.invalidIdentifier(_:)` for an
    ///   identifier or namespace outside the rules of `APIEnvironment.id`, `EnvironmentError.duplicateIdentifier(_:)`,
    ///   `EnvironmentError.unknownEnvironment(_:known:)` for a mapping or an override naming an
    ///   environment the set lacks.
    public init(
        environments: [APIEnvironment],
        build: BuildChannelReading,
        mapping: BuildMapping = BuildMapping(),
        switching: EnvironmentSwitching = .forbiddenInAppStoreBuilds,
        sessionsOnSwitch: SessionsOnSwitch = .kept,
        store: any EnvironmentChoiceStore,
        override: EnvironmentOverride? = EnvironmentOverride.fromProcess()
    ) throws {
        guard !environments.isEmpty else { throw EnvironmentError.noEnvironments }
        let ids = environments.map(\.id)
        for list in [ids, environments.map(\.storageNamespace)] {
            var seen = Set<String>()
            for id in list {
                try APIEnvironment.validate(identifier: id)
                guard seen.insert(id).inserted else { throw EnvironmentError.duplicateIdentifier(id) }
            }
        }
        for id in mapping.allIDs where !ids.contains(id) {
            throw EnvironmentError.unknownEnvironment(id, known: ids)
        }
        let decision = try EnvironmentDecider.decide(
            ids: ids, mapping: mapping, switching: switching, override: override,
            persisted: { try store.load() }, build: build)
        self.environments = environments
        self.mapping = mapping
        self.switching = switching
        self.sessionsOnSwitch = sessionsOnSwitch
        self.build = build
        self.store = store
        self.override = override
        self.state = Locked(State(index: ids.firstIndex(of: decision.environmentID) ?? 0, decision: decision))
    }

    /// Detects the build channel with `detector`, then creates the set.
    /// - Throws: See ``init(environments:build:mapping:switching:sessionsOnSwitch:store:override:)``.
    public static func detect(
        environments: [APIEnvironment],
        detector: any BuildChannelDetecting,
        mapping: BuildMapping = BuildMapping(),
        switching: EnvironmentSwitching = .forbiddenInAppStoreBuilds,
        sessionsOnSwitch: SessionsOnSwitch = .kept,
        store: any EnvironmentChoiceStore,
        override: EnvironmentOverride? = EnvironmentOverride.fromProcess()
    ) async throws -> EnvironmentSet {
        try EnvironmentSet(
            environments: environments, build: await detector.detectChannel(), mapping: mapping,
            switching: switching, sessionsOnSwitch: sessionsOnSwitch, store: store, override: override)
    }

    deinit {
        broadcaster.finish()
    }

    // MARK: Reading

    /// The environment in use.
    public var current: APIEnvironment { environments[currentIndex] }

    /// Why the current environment is in use.
    public var decision: EnvironmentDecision { state.current.decision }

    /// Whether ``switchEnvironment(to:)`` is allowed in this build.
    public var isSwitchingAllowed: Bool { !switching.isLocked(build.channel) }

    /// The environment with identifier `id`, if the set has one.
    public func environment(_ id: String) -> APIEnvironment? {
        environments.first { $0.id == id }
    }

    /// A stream of decisions from now on, one per switch or reset; ends when the set is released.
    /// Each stream keeps its newest 32 unconsumed decisions.
    public func changes() -> AsyncStream<EnvironmentDecision> {
        broadcaster.subscribe()
    }

    /// The index of the current environment in ``environments`` (what clients route by).
    package var currentIndex: Int { state.current.index }

    // MARK: Switching

    /// Makes `id` the current environment for every client built for this set, and remembers it
    /// for the next launch. Calls already running finish against the environment they started in.
    ///
    /// With ``SessionsOnSwitch/signedOut`` the left environment's session is then reset on every
    /// client (tokens, cookies, cache partition); with ``SessionsOnSwitch/kept`` it is kept for
    /// when the app switches back. Switching to the current environment still saves the choice.
    ///
    /// - Throws: `EnvironmentError.switchingForbidden(current:channel:)` when this build is locked;
    ///   `EnvironmentError.unknownEnvironment(_:known:)`; `EnvironmentError.storeFailed(operation:reason:)`
    ///   when the choice cannot be saved (nothing changes then); `SessionResetError` when
    ///   resetting the left session failed in part (the switch itself happened).
    public func switchEnvironment(to id: String) async throws {
        guard isSwitchingAllowed else {
            throw EnvironmentError.switchingForbidden(current: current.id, channel: build.channel)
        }
        guard let index = environments.firstIndex(where: { $0.id == id }) else {
            throw EnvironmentError.unknownEnvironment(id, known: environments.map(\.id))
        }
        let decision = EnvironmentDecision(environmentID: id, source: .switched, build: build)
        try await move(to: index, decision: decision) { try $0.save(id) }
    }

    /// Forgets the persisted choice and decides again from the override and the build (as the next
    /// launch would), switching every client there.
    ///
    /// - Throws: `EnvironmentError.storeFailed(operation:reason:)` when the choice cannot be
    ///   cleared (nothing changes then); `SessionResetError` as for ``switchEnvironment(to:)``.
    public func resetChoice() async throws {
        let decision = try EnvironmentDecider.decide(
            ids: environments.map(\.id), mapping: mapping, switching: switching, override: override,
            persisted: { nil }, build: build)
        let index = environments.firstIndex { $0.id == decision.environmentID } ?? 0
        try await move(to: index, decision: decision) { try $0.clear() }
    }

    /// Makes the environment at `index` current: `persist` writes the choice to the store, then
    /// the decision is published, one move at a time, so concurrent switches leave the same
    /// choice in memory and on disk, and `changes()` sees them in the order they took effect (its
    /// last value is ``current``). Then signs out of the environment left when ``sessionsOnSwitch``
    /// says so. Nothing changes when `persist` throws.
    ///
    /// A move starts once the previous one ended, its sign-out included: a switch back to an
    /// environment whose sign-out is still under way returns after that sign-out, so a sign-in
    /// made once it returned is not signed out by it. A move runs to its end even when the caller
    /// is cancelled (the choice is on disk by then).
    private func move(
        to index: Int, decision: EnvironmentDecision, persist: @escaping @Sendable (any EnvironmentChoiceStore) throws -> Void
    ) async throws {
        let work: Task<Void, any Error> = lastMove.withLock { last in
            let previous = last
            let work = Task { [self] in
                await previous?.value
                try await moveNow(to: index, decision: decision, persist: persist)
            }
            last = Task { _ = await work.result }
            return work
        }
        try await work.value
    }

    /// ``move(to:decision:persist:)`` once the previous move ended.
    private func moveNow(
        to index: Int, decision: EnvironmentDecision, persist: @escaping @Sendable (any EnvironmentChoiceStore) throws -> Void
    ) async throws {
        // The write runs on the writer's own queue, never on a thread of Swift's cooperative pool
        // (a file write can wait on a busy disk), and outside the routing lock, which every call
        // takes to find its lane. The writer runs one move at a time, so the order of the writes
        // is the order of the published decisions.
        let left = try await writer.run { [self] in
            try persist(store)
            return state.withLock { state -> Int in
                defer {
                    state = State(index: index, decision: decision)
                    broadcaster.publish(decision)
                }
                return state.index
            }
        }
        // Not when a later switch went back to it meanwhile: that would sign out of the
        // environment the app is in.
        if sessionsOnSwitch == .signedOut, left != index, currentIndex != left {
            try await resetSessions(ofEnvironmentAt: left)
        }
    }

    // MARK: Clients

    /// Registers a client's session reset for one environment (called by clients built for the set).
    func register(_ reset: @escaping @Sendable (Int) async -> [SessionResetError.Failure]?) {
        resetters.withLock { $0[UUID()] = reset }
    }

    /// Resets the session of the environment at `index` in every registered client.
    /// - Throws: `SessionResetError` listing what failed; every client is attempted.
    func resetSessions(ofEnvironmentAt index: Int) async throws {
        var failures: [SessionResetError.Failure] = []
        for (id, reset) in resetters.current {
            if let failed = await reset(index) {
                failures += failed
            } else {
                resetters.withLock { _ = $0.removeValue(forKey: id) }
            }
        }
        if !failures.isEmpty { throw SessionResetError(failures: failures) }
    }
}

/// Runs the writes of environment choices one at a time on a serial queue of its own, off Swift's
/// cooperative pool.
private actor ChoiceWriter {
    private nonisolated let executor = BlockingWorkExecutor(label: "courier.environment-choice")
    nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Runs `body` on the writer's queue.
    func run<Result: Sendable>(_ body: @Sendable () throws -> Result) throws -> Result { try body() }
}
