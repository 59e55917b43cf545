import Foundation
import Testing
import Courier
import CourierTesting
@testable import CourierOffline

/// A mutation belongs to the environment and account it was made in: after a switch it waits
/// (or is discarded, per policy) and is never delivered elsewhere. The proof is the reference
/// server's arrival count in each environment's namespace.
@Suite("Offline mutations stay in their environment and account (reference server)")
struct OriginTests {
    func queue(
        _ dir: TemporaryDirectory, _ client: APIClient, _ configure: (inout MutationQueue.Configuration) -> Void = { _ in }
    ) throws -> MutationQueue {
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        configure(&configuration)
        return try MutationQueue(path: dir.path("queue.sqlite"), client: client, configuration: configuration)
    }

    static func outcomes(_ events: AsyncStream<MutationEvent>, count: Int) async -> [String] {
        var outcomes: [String] = []
        for await event in events {
            switch event.outcome {
            case .held(let origin): outcomes.append("held \(event.mutationID) \(origin.environment ?? "-")")
            case .discarded(let origin): outcomes.append("discarded \(event.mutationID) \(origin.environment ?? "-")")
            case .sent: outcomes.append("sent \(event.mutationID)")
            default: continue
            }
            if outcomes.count == count { break }
        }
        return outcomes
    }

    @Test func aMutationWaitsForItsEnvironmentAfterASwitchAndIsNeverSentElsewhere() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let stagingSpace = OfflineServer.makeNamespace("origin-staging")
        let productionSpace = OfflineServer.makeNamespace("origin-production")
        let staging = try OfflineServer.environment(namespace: stagingSpace)
        let production = try OfflineServer.environment(namespace: productionSpace)
        let client = makeClient(staging)
        let queue = try queue(dir, client)
        let events = await queue.events()
        for i in 0..<3 { try await queue.enqueue(.json(id: "s-\(i)", method: .post, path: "/mutations", body: ["i": i])) }

        try await client.switchEnvironment(to: production)
        let away = try await queue.flush()
        #expect(away.sent == 0 && away.held == 3 && away.pending == 3)
        #expect(try await queue.pending().map(\.origin.environment) == Array(repeating: staging.id, count: 3))
        try await queue.enqueue(.json(id: "p-0", method: .post, path: "/mutations", body: ["i": 0]))
        let inProduction = try await queue.flush()
        #expect(inProduction.sent == 1 && inProduction.held == 3)

        try await client.switchEnvironment(to: staging)
        let back = try await queue.flush()
        #expect(back.sent == 3 && back.held == 0 && back.pending == 0)

        #expect(try await OfflineServer.log(namespace: stagingSpace).applied.compactMap(\.key) == ["s-0", "s-1", "s-2"])
        let productionLog = try await OfflineServer.log(namespace: productionSpace)
        #expect(productionLog.applied.compactMap(\.key) == ["p-0"])
        #expect(productionLog.deliveries == 1, "no staging mutation reached production")
        let held = (0..<3).map { "held s-\($0) \(staging.id)" }
        // Held is reported once per mutation, not again by the later flushes that find it.
        #expect(await Self.outcomes(events, count: 7) == held + ["sent p-0"] + (0..<3).map { "sent s-\($0)" })
    }

    @Test func theDiscardPolicyDeletesForeignMutationsUnsent() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let stagingSpace = OfflineServer.makeNamespace("origin-discard-staging")
        let productionSpace = OfflineServer.makeNamespace("origin-discard-production")
        let client = makeClient(try OfflineServer.environment(namespace: stagingSpace))
        let queue = try queue(dir, client) { $0.foreignMutations = .discard }
        let events = await queue.events()
        for i in 0..<2 { try await queue.enqueue(.json(id: "s-\(i)", method: .post, path: "/mutations", body: ["i": i])) }
        try await client.switchEnvironment(to: try OfflineServer.environment(namespace: productionSpace))
        try await queue.enqueue(.json(id: "p-0", method: .post, path: "/mutations", body: ["i": 0]))
        let report = try await queue.flush()
        #expect(report.discarded == 2 && report.sent == 1 && report.pending == 0)
        #expect(try await OfflineServer.log(namespace: stagingSpace).deliveries == 0)
        #expect(try await OfflineServer.log(namespace: productionSpace).applied.compactMap(\.key) == ["p-0"])
        let name = "test-\(stagingSpace)"
        #expect(await Self.outcomes(events, count: 3) == ["discarded s-0 \(name)", "discarded s-1 \(name)", "sent p-0"])
    }

    @Test func aMutationWaitsForTheAccountItWasMadeIn() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let space = OfflineServer.makeNamespace("origin-account")
        let account = Locked<String?>("u1")
        let queue = try queue(dir, makeClient(try OfflineServer.environment(namespace: space))) { configuration in
            configuration.account = { account.current }
        }
        try await queue.enqueue(.json(id: "u1-edit", method: .post, path: "/mutations", body: ["i": 1]))
        account.set("u2")
        let other = try await queue.flush()
        #expect(other.sent == 0 && other.held == 1)
        account.set(nil)  // signed out
        #expect(try await queue.flush().held == 1)
        #expect(try await OfflineServer.log(namespace: space).deliveries == 0)
        account.set("u1")
        let back = try await queue.flush()
        #expect(back.sent == 1 && back.held == 0)
        #expect(try await queue.pending().isEmpty)
        #expect(try await OfflineServer.log(namespace: space).applied.compactMap(\.key) == ["u1-edit"])
    }

    @Test func anIDPendingForAnotherEnvironmentCannotBeReplacedFromThisOne() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let client = makeClient(try OfflineServer.environment(namespace: OfflineServer.makeNamespace("origin-id")))
        let queue = try queue(dir, client)
        try await queue.enqueue(.json(id: "same", method: .post, path: "/mutations", body: ["i": 1]))
        let other = try OfflineServer.environment(namespace: OfflineServer.makeNamespace("origin-id-2"))
        try await client.switchEnvironment(to: other)
        await #expect(throws: MutationQueueError.self) {
            try await queue.enqueue(.json(id: "same", method: .post, path: "/mutations", body: ["i": 2]))
        }
        #expect(try await queue.pending().map(\.mutation.body) == [Data(#"{"i":1}"#.utf8)])
    }

    /// The client-side check that closes the gap between the queue's choice and the send: a call
    /// required for one environment is not sent when the client points at another.
    @Test func aCallRequiredForAnotherEnvironmentIsNotSent() async throws {
        let stub = StubTransport { _ in .status(201) }
        let client = APIClient(environment: APIEnvironment(name: "production", baseURL: URL(string: "https://p.example")!)) {
            $0.transport = stub
        }
        await #expect(throws: EnvironmentMismatch(required: "staging", current: "production")) {
            _ = try await client.response(for: Request<Void>(method: .post, path: "/x"), requiredEnvironment: "staging")
        }
        #expect(stub.requestCount == 0)
        _ = try await client.response(for: Request<Void>(method: .post, path: "/x"), requiredEnvironment: "production")
        #expect(stub.requestCount == 1)
    }
}
