import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
@testable import CourierEnvironments
import CourierTesting

@Suite("Environment switching: clients follow, choices persist, locks hold")
struct EnvironmentSwitchingTests {
    typealias F = EnvironmentFixture

    /// A client for `set` whose every environment has its own stub transport answering 200 `{}`.
    static func stubbedClient(_ set: EnvironmentSet) throws -> (APIClient, [String: StubTransport]) {
        var stubs: [String: StubTransport] = [:]
        let client = try APIClient(environments: set) { configuration, environment in
            let stub = StubTransport { _ in .json("{}") }
            stubs[environment.id] = stub
            configuration.transport = stub
        }
        return (client, stubs)
    }

    @Test("every client built for the set follows a switch; calls carry the environment's URL and headers")
    func clientsFollowSwitch() async throws {
        var staging = try F.environment("staging")
        staging.headers = ["X-API-Key": "staging-key"]
        let set = try EnvironmentSet(
            environments: [F.environment("development"), staging, F.environment("production")],
            build: F.reading(.testFlight), store: InMemoryEnvironmentChoiceStore(), override: nil)
        let (first, firstStubs) = try Self.stubbedClient(set)
        let (second, secondStubs) = try Self.stubbedClient(set)

        try await first.send(Request<Void>.get("/items"))
        try await second.send(Request<Void>.get("/items"))
        #expect(firstStubs["staging"]?.requests.first?.url?.absoluteString == "https://staging.example.test/v1/items")
        #expect(firstStubs["staging"]?.requests.first?.value(forHTTPHeaderField: "X-API-Key") == "staging-key")
        #expect(secondStubs["staging"]?.requestCount == 1)

        try await set.switchEnvironment(to: "production")
        #expect(first.environment.id == "production")
        try await first.send(Request<Void>.get("/items"))
        try await second.send(Request<Void>.get("/items"))
        let production = try #require(firstStubs["production"]?.requests.first)
        #expect(production.url?.absoluteString == "https://production.example.test/v1/items")
        #expect(production.value(forHTTPHeaderField: "X-API-Key") == nil)
        #expect(secondStubs["production"]?.requestCount == 1)
        #expect(firstStubs["staging"]?.requestCount == 1)
        #expect(set.decision.source == .switched)
    }

    @Test("a call running during a switch finishes in the environment it started in")
    func inFlightCallKeepsItsLane() async throws {
        let set = try F.set(channel: .testFlight)
        let gate = AsyncGate()
        let arrived = AsyncGate()
        var stubs: [String: StubTransport] = [:]
        let client = try APIClient(environments: set) { configuration, environment in
            let stub = StubTransport { _ in
                if environment.id == "staging" {
                    await arrived.open()
                    await gate.wait()
                }
                return .json("{}")
            }
            stubs[environment.id] = stub
            configuration.transport = stub
        }
        let running = Task { try await client.send(Request<Void>.get("/slow")) }
        await arrived.wait()
        try await set.switchEnvironment(to: "production")
        await gate.open()
        try await running.value
        try await client.send(Request<Void>.get("/next"))
        #expect(stubs["staging"]?.requests.map { $0.url?.path } == ["/v1/slow"])
        #expect(stubs["production"]?.requests.map { $0.url?.path } == ["/v1/next"])
    }

    @Test("the choice persists in a file: a new set and a new client start where the switch left off")
    func persistenceSurvivesNewClient() async throws {
        let directory = try F.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("nested/environment")

        let before = try F.set(channel: .debug, store: FileEnvironmentChoiceStore(fileURL: file))
        #expect(before.current.id == "development")
        try await before.switchEnvironment(to: "staging")
        #expect(try String(contentsOf: file, encoding: .utf8) == "staging\n")

        let after = try F.set(channel: .debug, store: FileEnvironmentChoiceStore(fileURL: file))
        #expect(after.current.id == "staging")
        #expect(after.decision.source == .persisted)
        let (client, stubs) = try Self.stubbedClient(after)
        try await client.send(Request<Void>.get("/items"))
        #expect(stubs["staging"]?.requestCount == 1)
        #expect(stubs["development"]?.requestCount == 0)

        // An override still wins over the persisted choice on the next launch.
        let overridden = try F.set(
            channel: .debug, override: EnvironmentOverride(environmentID: "production", origin: .environmentVariable),
            store: FileEnvironmentChoiceStore(fileURL: file))
        #expect(overridden.current.id == "production")

        // Reset forgets the file and decides again from the build.
        try await after.resetChoice()
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(after.current.id == "development")
        #expect(after.decision.source == .build)
        try await client.send(Request<Void>.get("/items"))
        #expect(stubs["development"]?.requestCount == 1)
    }

    @Test("a production-locked set refuses to switch with a typed error and changes nothing")
    func productionLockedRefuses() async throws {
        let store = InMemoryEnvironmentChoiceStore()
        let set = try F.set(channel: .appStore, store: store)
        let (client, stubs) = try Self.stubbedClient(set)
        await #expect(throws: EnvironmentError.switchingForbidden(current: "production", channel: .appStore)) {
            try await set.switchEnvironment(to: "staging")
        }
        #expect(set.current.id == "production")
        #expect(try store.load() == nil)
        try await client.send(Request<Void>.get("/items"))
        #expect(stubs["production"]?.requestCount == 1)
        #expect(stubs["staging"]?.requestCount == 0)

        let alwaysLocked = try F.set(channel: .debug, switching: .forbidden)
        await #expect(throws: EnvironmentError.switchingForbidden(current: "development", channel: .debug)) {
            try await alwaysLocked.switchEnvironment(to: "production")
        }
    }

    @Test("switching to an unknown environment or failing to save changes nothing")
    func failedSwitches() async throws {
        let set = try F.set(channel: .testFlight)
        await #expect(throws: EnvironmentError.unknownEnvironment("qa", known: ["development", "staging", "production"])) {
            try await set.switchEnvironment(to: "qa")
        }
        struct BrokenStore: EnvironmentChoiceStore {
            func load() throws -> String? { nil }
            func save(_ environmentID: String) throws {
                throw EnvironmentError.storeFailed(operation: "save", reason: "disk full")
            }
            func clear() throws {}
        }
        let broken = try F.set(channel: .testFlight, store: BrokenStore())
        await #expect(throws: EnvironmentError.storeFailed(operation: "save", reason: "disk full")) {
            try await broken.switchEnvironment(to: "production")
        }
        #expect(broken.current.id == "staging")
    }

    @Test("concurrent switches leave the same choice in memory and in the store")
    func concurrentSwitches() async throws {
        let store = InMemoryEnvironmentChoiceStore()
        let set = try F.set(channel: .testFlight, store: store)
        var changes = set.changes().makeAsyncIterator()
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<64 {
                let id = ["development", "staging", "production"][index % 3]
                group.addTask { try? await set.switchEnvironment(to: id) }
            }
        }
        #expect(try store.load() == set.current.id)
        #expect(set.decision.environmentID == set.current.id)
        // Every switch published in the order it took effect: the last one is the current one.
        var last: String?
        for _ in 0..<32 { last = await changes.next()?.environmentID }  // the buffer keeps the newest 32
        #expect(last == set.current.id)
    }

    /// Waits for `semaphore` on a dispatch thread, not on one of the cooperative pool's.
    static func wait(for semaphore: DispatchSemaphore, seconds: Int) async -> DispatchTimeoutResult {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: semaphore.wait(timeout: .now() + .seconds(seconds))) }
        }
    }

    @Test("a slow save holds neither the calls' routing nor a thread of the cooperative pool")
    func slowSaveBlocksNoRouting() async throws {
        /// A store whose save waits until the test lets it go (a disk that is busy).
        final class SlowStore: EnvironmentChoiceStore, @unchecked Sendable {
            let entered = DispatchSemaphore(value: 0)
            let proceed = DispatchSemaphore(value: 0)
            func load() throws -> String? { nil }
            func save(_ environmentID: String) throws {
                entered.signal()
                _ = proceed.wait(timeout: .now() + 30)
            }
            func clear() throws {}
        }
        let store = SlowStore()
        let set = try F.set(channel: .testFlight, store: store)
        let switching = Task { try await set.switchEnvironment(to: "production") }
        #expect(await Self.wait(for: store.entered, seconds: 30) == .success)
        // While the save waits, reading the current environment (what every call does to find its
        // lane) returns at once, and other tasks still run.
        let read = DispatchSemaphore(value: 0)
        let reader = Thread {
            _ = set.current
            read.signal()
        }
        reader.start()
        let readWhileSaving = await Self.wait(for: read, seconds: 5)
        #expect(readWhileSaving == .success, "the routing lock was held while the choice was written")
        #expect(set.current.id == "staging", "nothing changes before the save succeeds")
        store.proceed.signal()
        try await switching.value
        #expect(set.current.id == "production")
    }

    @Test("changes() reports each switch with its decision")
    func changesStream() async throws {
        let set = try F.set(channel: .testFlight)
        var changes = set.changes().makeAsyncIterator()
        try await set.switchEnvironment(to: "development")
        try await set.resetChoice()
        #expect(await changes.next()?.environmentID == "development")
        let reset = await changes.next()
        #expect(reset?.environmentID == "staging")
        #expect(reset?.source == .build)
    }

    @Test("sessions kept per environment: a switch leaves staging's tokens, and production has none")
    func sessionsKept() async throws {
        let (set, tokens, client) = try Self.authClient(sessionsOnSwitch: .kept)
        let staging = tokens[try #require(set.environment("staging"))]
        try await staging.signIn(AuthTokens(accessToken: "staging-access-token", refreshToken: "r"))
        try await set.switchEnvironment(to: "production")
        #expect(try await staging.isSignedIn())
        await #expect(throws: NetworkError.self) { try await client.send(Request<Void>.get("/me").policy(.authorizedRead)) }
        try await set.switchEnvironment(to: "staging")
        try await client.send(Request<Void>.get("/me").policy(.authorizedRead))
    }

    @Test("sessions signed out on switch: leaving staging resets its token manager on every client")
    func sessionsSignedOut() async throws {
        let (set, tokens, client) = try Self.authClient(sessionsOnSwitch: .signedOut)
        let staging = tokens[try #require(set.environment("staging"))]
        try await staging.signIn(AuthTokens(accessToken: "staging-access-token", refreshToken: "r"))
        try await client.send(Request<Void>.get("/me").policy(.authorizedRead))
        try await set.switchEnvironment(to: "production")
        #expect(try await !staging.isSignedIn())
        // A switch to the same environment resets nothing.
        let production = tokens[try #require(set.environment("production"))]
        try await production.signIn(AuthTokens(accessToken: "production-access-token", refreshToken: "r"))
        try await set.switchEnvironment(to: "production")
        #expect(try await production.isSignedIn())
        withExtendedLifetime(client) {}
    }

    static func authClient(
        sessionsOnSwitch: SessionsOnSwitch
    ) throws -> (EnvironmentSet, EnvironmentScoped<TokenManager>, APIClient) {
        let set = try F.set(channel: .testFlight, sessionsOnSwitch: sessionsOnSwitch)
        let tokens = EnvironmentScoped { environment in
            TokenManager(
                store: InMemoryTokenStore(), transport: StubTransport { _ in .status(500) },
                grant: .oauth2(tokenURL: environment.baseURLs["default"]!.appendingPathComponent("token")))
        }
        let client = try APIClient(environments: set) { configuration, environment in
            configuration.transport = StubTransport { request in
                request.value(forHTTPHeaderField: "Authorization") == "Bearer staging-access-token" && environment.id == "staging"
                    ? .json("{}") : .status(401)
            }
            configuration.interceptors = [AuthInterceptor(tokenManager: tokens[environment])]
        }
        return (set, tokens, client)
    }

    /// development, staging and production (pinned), in a TestFlight build: staging is current.
    static func setWithPinnedProduction() throws -> EnvironmentSet {
        var production = try F.environment("production")
        production.pins = try PinningPolicy(pins: [
            "production.example.test": [
                String(repeating: "A", count: 43) + "=", String(repeating: "B", count: 43) + "=",
            ]
        ])
        return try EnvironmentSet(
            environments: [F.environment("development"), F.environment("staging"), production],
            build: F.reading(.testFlight), store: InMemoryEnvironmentChoiceStore(), override: nil)
    }

    @Test("an environment's pins put its requests through a PinningTransport")
    func pinsPerEnvironment() async throws {
        let set = try Self.setWithPinnedProduction()
        let client = try APIClient(environments: set)
        #expect(!(client.configuration.transport is PinningTransport))
        try await set.switchEnvironment(to: "production")
        #expect(client.configuration.transport is PinningTransport)
    }

    @Test("a transport configure installs without an environment's pins refuses that environment's pinned calls")
    func replacedTransportFailsClosed() async throws {
        let set = try Self.setWithPinnedProduction()
        let sent = Locked<[String]>([])
        let client = try APIClient(environments: set) { configuration, environment in
            // Not a test transport: an app's own wrapper, which says nothing about pins.
            configuration.transport = CountingTransport { request in sent.withLock { $0.append(request.url?.host ?? "") } }
        }
        _ = try await client.get("/items") as [String: String]
        try await set.switchEnvironment(to: "production")
        let error = await #expect(throws: NetworkError.self) { _ = try await client.get("/items") as [String: String] }
        #expect(error?.pinningFailure == .transportIgnoresPins(host: "production.example.test"))
        #expect(sent.withLock { $0 } == ["staging.example.test"])
    }
}

/// Answers every request with `{}` after telling `observe`; says nothing about pins.
private struct CountingTransport: Transport {
    let observe: @Sendable (URLRequest) -> Void
    func send(_ request: URLRequest) async throws -> HTTPResponse {
        observe(request)
        return .json("{}")
    }
}
