import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierOffline

@Suite("Connectivity")
struct ConnectivityTests {
    func next(_ iterator: inout AsyncStream<ConnectivityStatus>.Iterator) async -> ConnectivityStatus? {
        await iterator.next()
    }

    @Test func outcomesDriveTheStatus() async {
        let monitor = OutcomeConnectivityMonitor()
        var statuses = monitor.statuses().makeAsyncIterator()
        #expect(await next(&statuses) == .online)

        monitor.record(error: NetworkError.offline(URLError(.notConnectedToInternet)))
        #expect(monitor.status == .noInternet)
        monitor.record(statusCode: 200)
        #expect(monitor.status == .online)
        monitor.record(error: NetworkError.transport(URLError(.cannotConnectToHost)))  // refused
        #expect(monitor.status == .backendUnavailable)
        monitor.record(statusCode: 404)  // any answer means the backend is there
        #expect(monitor.status == .online)

        // A 503 storm: two are a blip, three mean the backend is down.
        monitor.record(statusCode: 503)
        monitor.record(statusCode: 503)
        #expect(monitor.status == .online)
        monitor.record(statusCode: 503)
        #expect(monitor.status == .backendUnavailable)
        monitor.record(statusCode: 201)
        monitor.recordRealtime(connected: false)
        #expect(monitor.status == .realtimeDisconnected)
        #expect(monitor.status.isReachable)
        monitor.recordRealtime(connected: true)

        var seen: [ConnectivityStatus] = []
        for _ in 0..<8 { if let status = await next(&statuses) { seen.append(status) } }
        #expect(
            seen == [
                .noInternet, .online, .backendUnavailable, .online, .backendUnavailable, .online, .realtimeDisconnected, .online,
            ])
    }

    @Test func theInterceptorSeesRealTransportOutcomes() async throws {
        let monitor = OutcomeConnectivityMonitor()
        let client = makeClient(OfflineServer.unreachable, extra: [monitor.interceptor])
        await #expect(throws: NetworkError.self) { try await client.send(Request<Void>.post("/mutations")) }
        #expect(monitor.status == .backendUnavailable)  // connection refused: the network is fine
        try await client.switchEnvironment(to: try OfflineServer.environment(namespace: OfflineServer.makeNamespace("conn")))
        _ = try await client.send(Request<HTTPResponse>.raw(.get, "/mutations"))
        #expect(monitor.status == .online)
    }

    /// Placed innermost (as the README shows), the interceptor is never reached by a call the
    /// server paused with `Retry-After`: the client still tells the monitor.
    @Test func aCallRefusedBeforeTheInnermostInterceptorStillReachesTheMonitor() async throws {
        let monitor = OutcomeConnectivityMonitor()
        let stub = StubTransport(responses: [.status(503, headers: ["Retry-After": "120"])])
        let client = APIClient(environment: APIEnvironment(name: "unit", baseURL: URL(string: "https://api.example.test")!)) {
            $0.transport = stub
            $0.interceptors = .standard() + [monitor.interceptor]
        }
        await #expect(throws: NetworkError.self) { try await client.send(Request<Void>.get("/items")) }
        let refused = await #expect(throws: NetworkError.self) { try await client.send(Request<Void>.get("/items")) }
        #expect(refused?.kind == .backendUnavailable)
        #expect(stub.requestCount == 1, "the second call was refused before anything was sent")
        #expect(monitor.status == .backendUnavailable)
    }

    @Test func theHealthProbeBacksOffAndRestoresOnline() async throws {
        let monitor = OutcomeConnectivityMonitor()
        let clock = TestClock(mode: .manual)
        let answers = Locked([false, false, true])
        let probes = Locked(0)
        monitor.startProbing(
            backoff: Backoff(initialDelay: .seconds(1), maximumDelay: .seconds(60), jitter: .equal), clock: clock, random: { 1 },
            probe: {
                probes.withLock { $0 += 1 }
                return answers.withLock { $0.isEmpty ? true : $0.removeFirst() }
            })
        #expect(clock.sleeperCount == 0)  // online: no probing
        monitor.record(error: URLError(.notConnectedToInternet))
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(2))
        try await clock.waitForSleepers(count: 1)
        #expect(monitor.status == .noInternet)
        var statuses = monitor.statuses().makeAsyncIterator()
        #expect(await next(&statuses) == .noInternet)
        clock.advance(by: .seconds(4))
        #expect(await next(&statuses) == .online)
        #expect(clock.sleeps == [.seconds(1), .seconds(2), .seconds(4)])
        #expect(probes.current == 3)
        monitor.stopProbing()
    }

    /// The queue follows the monitor: while the backend is unreachable it backs off (a bounded
    /// number of attempts however long the outage), and the transition to online drains it.
    @Test func connectivityTransitionsDriveFlushesWithoutAFlushLoop() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-connectivity")
        let monitor = OutcomeConnectivityMonitor()
        let attempts = AttemptCounter()
        // The mutations' environment, first where nothing listens (the outage), then at the server.
        let environment = try OfflineServer.environment(namespace: namespace)
        let down = APIEnvironment(name: environment.id, baseURL: OfflineServer.unreachable.baseURL)
        let client = makeClient(down, extra: [attempts, monitor.interceptor])
        let queueClock = TestClock(mode: .manual)
        var configuration = MutationQueue.Configuration()
        configuration.clock = queueClock
        configuration.random = { 1 }
        let queue = try MutationQueue(path: dir.path("q.sqlite"), client: client, configuration: configuration)
        let recorder = await EventRecorder(queue)
        let probeClock = TestClock(mode: .manual)
        monitor.startProbing(client: client, path: "/_health", clock: probeClock)
        await queue.flushes(on: monitor)

        for i in 0..<3 {
            try await queue.enqueue(.json(id: "c-\(i)", method: .post, path: "/mutations", body: ["i": i]))
        }
        try await queueClock.waitForSleepers(count: 1)
        #expect(monitor.status == .backendUnavailable)
        #expect(attempts.count == 1)

        // One hour offline, in one-minute steps: backoff 1, 2, 4 … 256 s, then every 300 s.
        for _ in 0..<60 {
            queueClock.advance(by: .seconds(60))
            try await queueClock.waitForSleepers(count: 1)
        }
        #expect(attempts.count >= 10 && attempts.count <= 20, "attempts while offline: \(attempts.count)")
        #expect(try await queue.pendingCount() == 3)

        // The backend comes back; the health probe notices, the monitor turns online, the queue drains.
        try await client.switchEnvironment(to: environment)
        try await probeClock.waitForSleepers(count: 1)
        probeClock.advance(by: .seconds(120))
        #expect(await recorder.wait { $0.filter { if case .sent = $0.outcome { true } else { false } }.count == 3 })
        #expect(monitor.status == .online)
        #expect(try await queue.pendingCount() == 0)
        let log = try await OfflineServer.log(namespace: namespace)
        #expect(log.applied.map(\.key) == ["c-0", "c-1", "c-2"])
        #expect(log.deliveries == 3)
        monitor.stopProbing()
        await queue.stop()
    }

    @Test func aLifecycleNotificationFlushes() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("offline-foreground")
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        let queue = try MutationQueue(
            path: dir.path("q.sqlite"), client: makeClient(try OfflineServer.environment(namespace: namespace)),
            configuration: configuration)
        let recorder = await EventRecorder(queue)
        try await queue.enqueue(.json(id: "f", method: .post, path: "/mutations", body: ["i": 1]))
        let center = NotificationCenter()
        let name = Notification.Name("test.willEnterForeground")
        let trigger = LifecycleFlushTrigger(queue: queue, notification: name, center: center)
        center.post(name: name, object: nil)
        #expect(await recorder.wait { $0.contains { if case .sent = $0.outcome { true } else { false } } })
        #expect(try await OfflineServer.log(namespace: namespace).applied.map(\.key) == ["f"])
        withExtendedLifetime(trigger) {}
    }
}
