import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierOffline

/// Several queues on one database file — the way an app and its extension, or two app instances,
/// share an outbox: one delivers at a time, decisions come from the table, nothing is sent twice
/// or lost. The proof is the reference server's count of arrivals per idempotency key and body.
@Suite("Offline queue shared by several processes (reference server)")
struct SharedFileTests {
    /// Two real processes enqueue 100 mutations each into one file while both try to deliver.
    @Test func twoProcessesOnOneFileDeliverEveryMutationExactlyOnce() async throws {
        let helper = try CrashSafetyTests.helperURL()
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-shared")
        let base = try OfflineServer.baseURL(namespace: namespace).absoluteString
        var runs: [(ChildProcess, Task<Int32, Never>, URL)] = []
        for prefix in ["a", "b"] {
            let output = dir.url.appendingPathComponent("\(prefix).out")
            let (process, status) = try CrashSafetyTests.launch(
                helper,
                arguments: [
                    "--db", dir.path("queue.sqlite"), "--base-url", base, "--count", "100", "--start", "0", "--prefix", prefix,
                ], output: output)
            runs.append((process, status, output))
        }
        for (_, status, output) in runs {
            let code = await status.value
            #expect(code == 0, "helper \(output.lastPathComponent): \(CrashSafetyTests.diagnostics(output))")
            #expect(CrashSafetyTests.read(output).done)
        }
        let log = try await OfflineServer.log(namespace: namespace)
        let keys = log.applied.compactMap(\.key)
        #expect(Set(keys) == Set((0..<100).flatMap { ["a-\($0)", "b-\($0)"] }))
        #expect(log.byKey.count == 200 && log.byKey.values.allSatisfy { $0 == 1 })
        #expect(log.deliveries == 200, "every mutation arrived once: no process sent another's mutation again")
        #expect(log.replays == 0 && log.mismatches == 0)
        // Each process's mutations arrive in the order it enqueued them.
        for prefix in ["a", "b"] {
            let own = keys.filter { $0.hasPrefix("\(prefix)-") }
            #expect(own == (0..<100).map { "\(prefix)-\($0)" })
        }
    }

    /// An edit made through one queue while another queue on the same file is sending the same id:
    /// the edit gets a new key and goes out after the first payload; nothing is dead-lettered.
    @Test func anEditWhileAnotherQueueSendsTheSameIDIsDeliveredUnderANewKey() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-shared-edit")
        // The server applies, then holds the answer until released: the edit lands while the
        // first send is out, however loaded the machine (a fixed 0.5 s window was not enough).
        try await OfflineServer.control("POST", "/_mutations_config", namespace: namespace, json: ["holdAfterApply": true])
        let environment = try OfflineServer.environment(namespace: namespace)
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        let sender = try MutationQueue(
            path: dir.path("queue.sqlite"), client: makeClient(environment), configuration: configuration)
        let editor = try MutationQueue(
            path: dir.path("queue.sqlite"), client: makeClient(environment), configuration: configuration)
        try await sender.enqueue(.json(id: "k", method: .post, path: "/mutations", body: ["v": 1]))
        let flush = Task { try await sender.flush() }
        for _ in 0..<1000 {
            if try await OfflineServer.log(namespace: namespace).applied.count == 1 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        try await editor.enqueue(.json(id: "k", method: .post, path: "/mutations", body: ["v": 2]))
        // The editor cannot deliver while the sender holds the file's drain lock.
        let blocked = try await editor.flush()
        #expect(blocked.otherQueueDelivering)
        #expect(blocked.sent == 0)
        try await OfflineServer.control("POST", "/_mutations_config", namespace: namespace, json: ["holdAfterApply": false])
        let report = try await flush.value
        #expect(report.sent == 2)
        #expect(report.pending == 0)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map(\.key) == ["k", "k~1"])
        #expect(log.applied.map { $0.payload["v"]?.int } == [1, 2])
        #expect(log.mismatches == 0)
        #expect(try await sender.deadLetters().isEmpty)
        #expect(try await editor.deadLetters().isEmpty)
    }

    /// The app's queue (A) is delivering group g1 (its answer is held by the server). The share
    /// extension's queue (B) enqueues s in group g2; its flush finds the drain lock held and sends
    /// nothing (documented), then the extension ends. A's flush then returns "when no group can
    /// make progress" — with s pending in a group that can, never sent, until A's next trigger.
    @Test(.timeLimit(.minutes(1))) func aMutationEnqueuedByAnotherProcessDuringAFlushIsDeliveredByIt() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("handover")
        try await OfflineServer.control("POST", "/_mutations_config", namespace: namespace, json: ["holdAfterApply": true])
        let environment = try OfflineServer.environment(namespace: namespace)
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        let app = try MutationQueue(path: dir.path("q.sqlite"), client: makeClient(environment), configuration: configuration)
        let share = try MutationQueue(path: dir.path("q.sqlite"), client: makeClient(environment), configuration: configuration)
        try await app.enqueue(try .json(id: "x", method: .post, path: "/mutations", body: ["v": 1], group: "g1"))
        let flush = Task { try await app.flush() }
        for _ in 0..<1000 {
            if try await OfflineServer.log(namespace: namespace).applied.count == 1 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        try await share.enqueue(try .json(id: "s", method: .post, path: "/mutations", body: ["v": 1], group: "g2"))
        let blocked = try await share.flush()
        #expect(blocked.otherQueueDelivering && blocked.sent == 0)
        await share.stop()  // the extension finishes (completeRequest): its lock retry goes with it
        try await OfflineServer.control("POST", "/_mutations_config", namespace: namespace, json: ["holdAfterApply": false])
        let report = try await flush.value
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(report.pending == 0, "A's flush returned with \(report.pending) pending (report: \(report))")
        #expect(log.applied.compactMap(\.key) == ["x", "s"])
    }

    /// A group paused after a transient failure (backoff, `Retry-After`) stays paused for every
    /// queue on the file: another queue (the share extension) enqueueing into it does not send its
    /// head again at once, but wakes up on its own clock when the recorded pause ends.
    @Test(.timeLimit(.minutes(1))) func anotherQueueOnTheFileRespectsTheBackoffOfAGroup() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let refused = Locked(false)  // x is refused once (503), everything else is accepted
        let stub = StubTransport { request in
            let refuse = refused.withLock { done in
                defer { done = true }
                return !done && request.value(forHTTPHeaderField: "Idempotency-Key") == "x"
            }
            return refuse ? .status(503) : .status(201)
        }
        let client = APIClient(environment: OfflineServer.unreachable) {
            $0.transport = stub
            $0.interceptors = .standard(retry: RetryInterceptor(budget: nil, circuitBreaker: nil))
        }
        var configuration = MutationQueue.Configuration()
        configuration.backoff = Backoff(initialDelay: .seconds(60), maximumDelay: .seconds(300), jitter: .none)
        configuration.sendsOnEnqueue = false
        configuration.clock = TestClock(mode: .manual)
        let app = try MutationQueue(path: dir.path("q.sqlite"), client: client, configuration: configuration)
        let extensionClock = TestClock(mode: .manual)
        configuration.clock = extensionClock
        configuration.sendsOnEnqueue = true
        let extensionQueue = try MutationQueue(path: dir.path("q.sqlite"), client: client, configuration: configuration)

        try await app.enqueue(try .json(id: "x", method: .post, path: "/mutations", body: ["v": 1], group: "g"))
        #expect(try await app.flush().transientFailures == 1)  // g is paused for 60 s
        let recorder = await EventRecorder(extensionQueue)
        try await extensionQueue.enqueue(try .json(id: "y", method: .post, path: "/mutations", body: ["v": 1], group: "g"))
        try await extensionClock.waitForSleepers(count: 1)  // its drain skipped g, and waits for the pause's end
        #expect(stub.requestCount == 1)
        let rest = try #require(extensionClock.sleeps.first)
        #expect(rest > .seconds(55) && rest <= .seconds(60))

        extensionClock.advance(by: rest)
        #expect(await recorder.wait { $0.filter { if case .sent = $0.outcome { true } else { false } }.count == 2 })
        #expect(stub.requestCount == 3)
    }

    /// Holds the first request that reaches it until ``open()``; ``reached()`` returns once it holds it.
    final class FirstSendGate: Interceptor {
        private let taken = Locked(false)
        private let arrival = AsyncStream<Void>.makeStream()
        private let opening = AsyncStream<Void>.makeStream()
        var capabilities: PipelineCapabilities { [] }

        func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
            let first = taken.withLock { taken in
                defer { taken = true }
                return !taken
            }
            if first {
                arrival.continuation.yield()
                for await _ in opening.stream { break }
            }
            return try await next(request)
        }

        func reached() async { for await _ in arrival.stream { break } }
        func open() { opening.continuation.finish() }
    }

    /// The drain lock file deleted after one queue opened it and before another opened the file
    /// (an app's cleanup of files it does not know): the two queues still deliver one at a time.
    /// They locked two different files, and both sent the same mutation at once.
    @Test(.timeLimit(.minutes(1)), arguments: OfflineTransport.allCases)
    func aDeletedDrainLockFileStillLetsOneQueueDeliverAtATime(transport: OfflineTransport) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-lock-deleted")
        let environment = try OfflineServer.environment(namespace: namespace)
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        let path = dir.path("queue.sqlite")
        let gate = FirstSendGate()
        let sender = try MutationQueue(
            path: path, client: makeClient(environment, extra: [gate], transport: transport), configuration: configuration)
        try FileManager.default.removeItem(atPath: path + "-drain.lock")
        let other = try MutationQueue(
            path: path, client: makeClient(environment, transport: transport), configuration: configuration)
        try await sender.enqueue(.json(id: "k", method: .post, path: "/mutations", body: ["v": 1]))
        let flush = Task { try await sender.flush() }
        await gate.reached()  // the sender holds the drain lock, its request on its way

        let blocked = try await other.flush()
        #expect(blocked.otherQueueDelivering)
        #expect(blocked.sent == 0)
        gate.open()
        #expect(try await flush.value.sent == 1)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.deliveries == 1)
        #expect(log.replays == 0)
        #expect(log.byKey == ["k": 1])
    }
}
