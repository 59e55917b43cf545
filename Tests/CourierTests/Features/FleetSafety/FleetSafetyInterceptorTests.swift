import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// The budget and the breaker inside `RetryInterceptor`, on a `StubTransport` and a test clock.
@Suite struct FleetSafetyInterceptorTests {
    static let environment = APIEnvironment(name: "fleet-unit", baseURL: URL(string: "https://api.example.test")!)

    static func client(
        _ transport: StubTransport, clock: TestClock, budget: RetryBudget? = .standard,
        breaker: CircuitBreaker? = nil, metrics: CapturingMetricsSink? = nil, logger: CapturingNetworkLogger? = nil
    ) -> APIClient {
        APIClient(environment: environment) { configuration in
            configuration.transport = transport
            configuration.interceptors =
                .standard(
                    logger: logger, metrics: metrics,
                    retry: RetryInterceptor(clock: clock, random: { 1 }, budget: budget, circuitBreaker: breaker))
        }
    }

    static let get = Request<HTTPResponse>(method: .get, path: "/things", policy: .standard) { response, _ in response }

    static func failing(_ status: Int = 503) -> StubTransport {
        StubTransport { _ in .status(status) }
    }

    @Test func aBurstOfFailingCallsSendsOnlyTheBudgetedRetries() async throws {
        // The server answers once all 50 first attempts arrived, so every call sees the same balance.
        let gate = ArrivalGate(count: 50)
        let stub = StubTransport { _ in
            await gate.arrive()
            return .status(503)
        }
        let clock = TestClock(mode: .manual)
        let client = Self.client(stub, clock: clock, budget: RetryBudget(retryRatio: 0.2, minimumRetriesPerSecond: 0))
        let calls = (0..<50).map { _ in Task { try await client.send(Self.get) } }
        // 50 first attempts allow 10 retries: ten calls wait for theirs, forty end at once.
        try await clock.waitForSleepers(count: 10)
        clock.advance(by: .seconds(1))
        var failed = 0
        for call in calls where (try? await call.value) == nil { failed += 1 }
        #expect(failed == 50)
        #expect(stub.requestCount == 60)  // no second retries: the balance is spent
    }

    @Test func aRefusedRetryEndsTheCallWithItsLastErrorAndSaysWhy() async throws {
        let stub = Self.failing()
        let clock = TestClock()
        let metrics = CapturingMetricsSink()
        let logger = CapturingNetworkLogger()
        let client = Self.client(
            stub, clock: clock, budget: RetryBudget(retryRatio: 0, minimumRetriesPerSecond: 0.1), metrics: metrics,
            logger: logger)
        do {
            _ = try await client.response(for: Self.get)
            Issue.record("expected a failure")
        } catch let error as NetworkError {
            #expect(error.statusCode == 503)
        }
        #expect(stub.requestCount == 2)  // the floor allowed one retry in 10 s, not the second
        #expect(metrics.events.last?.retryRefusal == .budgetExhausted)
        #expect(metrics.events.last?.retryCount == 1)
        #expect(logger.entries.contains { $0.summary.contains("(retry budget exhausted)") })
    }

    @Test func theBudgetRefillsAfterTheWindow() async throws {
        let stub = Self.failing()
        let clock = TestClock()
        let client = Self.client(stub, clock: clock, budget: RetryBudget(retryRatio: 0, minimumRetriesPerSecond: 0.1))
        _ = try? await client.send(Self.get)
        #expect(stub.requestCount == 2)
        _ = try? await client.send(Self.get)
        #expect(stub.requestCount == 3)  // no balance: no retry
        clock.advance(by: .seconds(11))
        _ = try? await client.send(Self.get)
        #expect(stub.requestCount == 5)  // the withdrawal expired
    }

    @Test func noBudgetKeepsEveryRetryThePolicyAllows() async throws {
        let stub = Self.failing()
        let client = Self.client(stub, clock: TestClock(), budget: nil)
        for _ in 0..<5 { _ = try? await client.send(Self.get) }
        #expect(stub.requestCount == 15)
    }

    @Test func anOpenBreakerFailsFastWithoutTrafficThenOneProbeCloses() async throws {
        let failing = Locked(true)
        let stub = StubTransport { _ in failing.current ? .status(503) : .status(200) }
        let clock = TestClock()
        let breaker = CircuitBreaker(
            consecutiveFailures: 3, coolDown: Backoff(initialDelay: .seconds(10), maximumDelay: .seconds(60), jitter: .equal))
        let client = Self.client(stub, clock: clock, budget: nil, breaker: breaker)
        // One call: three failed attempts open the breaker (the third's retry is not sent).
        _ = try? await client.send(Self.get)
        #expect(stub.requestCount == 3)
        let error = await #expect(throws: NetworkError.self) { try await client.send(Self.get) }
        guard case .backendUnavailable(let host, let wait)? = error else {
            Issue.record("expected backendUnavailable, got \(String(describing: error))")
            return
        }
        #expect(host == "api.example.test")
        #expect(wait == .seconds(10))  // equal jitter, random 1: the top of 5...10 s
        #expect(error?.kind == .backendUnavailable)
        #expect(stub.requestCount == 3)  // nothing sent
        clock.advance(by: .seconds(10))
        failing.set(false)
        let probe = try await client.response(for: Self.get)
        #expect(probe.statusCode == 200)
        _ = try await client.response(for: Self.get)
        #expect(stub.requestCount == 5)
    }

    @Test func anotherHostsRetryAfterDoesNotPauseThisHost() async throws {
        // A redirect to a CDN that answers 503 + Retry-After: the CDN asked for the pause, not the API.
        let stub = StubTransport { request in
            if request.url?.host == "cdn.example.test" {
                return HTTPResponse(statusCode: 503, headers: ["Retry-After": "120"], url: request.url)
            }
            if request.url?.path == "/moved" {
                return HTTPResponse(statusCode: 302, headers: ["Location": "https://cdn.example.test/x"], url: request.url)
            }
            return .status(200)
        }
        let client = Self.client(stub, clock: TestClock(), budget: nil, breaker: .standard)
        _ = try? await client.send(Request<HTTPResponse>(method: .get, path: "/moved") { response, _ in response })
        let requests = stub.requestCount
        let next = try await client.response(for: Self.get)
        #expect(next.statusCode == 200)
        #expect(stub.requestCount == requests + 1)
    }

    @Test func aTokenEndpointsFailuresDoNotOpenTheAPIsBreaker() async throws {
        // The identity provider is down (503 + Retry-After); the API itself is fine.
        let stub = StubTransport { request in
            if request.url?.host == "id.example.test" {
                return HTTPResponse(statusCode: 503, headers: ["Retry-After": "120"], url: request.url)
            }
            return .status(200)
        }
        let store = InMemoryTokenStore(
            AuthTokens(accessToken: "old", refreshToken: "r", expiresAt: Date().addingTimeInterval(-60)))
        let tokens = TokenManager(
            store: store, transport: stub, grant: .oauth2(tokenURL: URL(string: "https://id.example.test/token")!))
        let breaker = CircuitBreaker(
            consecutiveFailures: 2, coolDown: Backoff(initialDelay: .seconds(10), maximumDelay: .seconds(60), jitter: .equal))
        let client = APIClient(environment: Self.environment) { configuration in
            configuration.transport = stub
            configuration.interceptors = .standard(
                tokenManager: tokens,
                retry: RetryInterceptor(clock: TestClock(), random: { 1 }, budget: nil, circuitBreaker: breaker))
        }
        let me = Request<HTTPResponse>(method: .get, path: "/me", policy: .authorizedRead) { response, _ in response }
        for _ in 0..<3 { _ = try? await client.send(me) }
        let sentToAPI = stub.requests.filter { $0.url?.host == "api.example.test" }.count
        let open = try await client.response(for: Self.get)
        #expect(open.statusCode == 200, "a public call still reaches the API")
        #expect(stub.requests.filter { $0.url?.host == "api.example.test" }.count == sentToAPI + 1)
    }

    @Test func aRetryAfterPausesEveryCallToTheHost() async throws {
        let stub = StubTransport(responses: [
            .status(503, headers: ["Retry-After": "120"]), .status(200), .status(200),
        ])
        let clock = TestClock()
        let client = Self.client(stub, clock: clock, budget: nil, breaker: .standard)
        // 120 s is more than the policy's 60 s maxRetryAfter: the call ends at once.
        _ = try? await client.send(Self.get)
        #expect(stub.requestCount == 1)
        let error = await #expect(throws: NetworkError.self) { try await client.send(Self.get) }
        #expect(error?.kind == .backendUnavailable)
        #expect(stub.requestCount == 1)
        clock.advance(by: .seconds(120))
        #expect(try await client.response(for: Self.get).statusCode == 200)
    }

    @Test func aShortHostWideRetryAfterIsWaitedFor() async throws {
        let stub = StubTransport(responses: [.status(429, headers: ["Retry-After": "5"]), .status(200)])
        let clock = TestClock()
        let client = Self.client(stub, clock: clock, budget: nil, breaker: .standard)
        let first = try? await client.send(
            Request<HTTPResponse>(method: .get, path: "/things", policy: .standard.with(\.retry, .none)) { r, _ in r })
        #expect(first == nil)
        let response = try await client.response(for: Self.get)  // another call: waits the 5 s first
        #expect(response.statusCode == 200)
        #expect(clock.sleeps == [.seconds(5)])
    }
}

/// Holds arrivals until `count` have arrived, then lets everyone through.
private actor ArrivalGate {
    private let count: Int
    private var arrived = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    init(count: Int) { self.count = count }

    func arrive() async {
        arrived += 1
        if arrived >= count {
            for continuation in waiting { continuation.resume() }
            waiting.removeAll()
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }
}

/// What a half-open breaker and the host-wide pause do when a call or a server misbehaves.
extension FleetSafetyInterceptorTests {
    static let faultEnvironment = APIEnvironment(name: "fleet-faults", baseURL: URL(string: "https://api.example.test")!)

    /// Cancels the call's task, while armed, before handing it on.
    struct CancelOnTheWayIn: Interceptor {
        let armed: Locked<Bool>
        var capabilities: PipelineCapabilities { [] }
        func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
            if armed.current { withUnsafeCurrentTask { $0?.cancel() } }
            return try await next(request)
        }
    }

    @Test func aHalfOpenProbeCancelledBeforeItIsSentLeavesTheBreakerUsable() async throws {
        let failing = Locked(true)
        let stub = StubTransport { _ in failing.current ? .status(503) : .status(200) }
        let clock = TestClock()
        let armed = Locked(false)
        let breaker = CircuitBreaker(
            consecutiveFailures: 1, coolDown: Backoff(initialDelay: .seconds(10), maximumDelay: .seconds(10), jitter: .none))
        let client = APIClient(environment: Self.faultEnvironment) {
            $0.transport = stub
            $0.interceptors =
                [CancelOnTheWayIn(armed: armed)]
                + [any Interceptor].standard(
                    retry: RetryInterceptor(clock: clock, random: { 1 }, budget: nil, circuitBreaker: breaker))
        }
        _ = try? await client.send(Self.get)  // a 503: the breaker opens for 10 s
        #expect(stub.requestCount == 1)
        clock.advance(by: .seconds(10))
        failing.set(false)
        armed.set(true)
        _ = try? await client.send(Self.get)  // the probe's call is cancelled before its attempt goes out
        armed.set(false)
        #expect(stub.requestCount == 1)
        for _ in 0..<3 {
            let response = try await client.response(for: Self.get)
            #expect(response.statusCode == 200)
        }
        #expect(stub.requestCount == 4)
    }

    @Test func aHugeRetryAfterHoldsTheHostForTheMaximumPauseAtMost() async throws {
        let served = Locked(0)
        let stub = StubTransport { _ in
            let number = served.withLock { count -> Int in
                count += 1
                return count
            }
            return number == 1 ? .status(503, headers: ["Retry-After": "31536000"]) : .status(200)
        }
        let clock = TestClock()
        let client = APIClient(environment: Self.faultEnvironment) {
            $0.transport = stub
            $0.interceptors = .standard(retry: RetryInterceptor(clock: clock, random: { 1 }))
        }
        _ = try? await client.send(Self.get)
        let held = await #expect(throws: NetworkError.self) { try await client.send(Self.get) }
        #expect(held?.kind == .backendUnavailable, "within the cap the host is still held")
        #expect(stub.requestCount == 1)
        clock.advance(by: .seconds(180))
        let later = await #expect(throws: NetworkError.self) { try await client.send(Self.get) }
        #expect(later?.kind == .backendUnavailable, "3 minutes in, the host is still held")
        clock.advance(by: .seconds(121))
        #expect(try await client.response(for: Self.get).statusCode == 200)
        #expect(stub.requestCount == 2)
    }
}
