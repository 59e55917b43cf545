import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

@Suite("Standard pipeline")
struct StandardPipelineTests {
    @Test("the full pipeline is in the documented order")
    func fullOrder() throws {
        let store = InMemoryTokenStore()
        let grant = RefreshTokenGrant.oauth2(tokenURL: try #require(URL(string: "http://127.0.0.1:9/auth/refresh")))
        let tokens = TokenManager(store: store, transport: StubTransport(responses: [HTTPResponse]()), grant: grant)
        let pipeline: [any Interceptor] = .standard(
            tokenManager: tokens, cache: HTTPCache(), logger: ConsoleNetworkLogger(),
            metrics: ClosureMetricsSink { _ in })
        let names = pipeline.map { String(describing: type(of: $0)) }
        #expect(
            names == [
                "RequestIDInterceptor", "LoggingInterceptor", "MetricsInterceptor", "CacheInterceptor",
                "DeduplicationInterceptor", "RetryInterceptor", "AuthInterceptor", "IdempotencyInterceptor",
            ])
    }

    @Test("without optional parts only request ID, retry and idempotency remain")
    func minimal() {
        let names = [any Interceptor].standard().map { String(describing: type(of: $0)) }
        #expect(names == ["RequestIDInterceptor", "RetryInterceptor", "IdempotencyInterceptor"])
    }

    @Test("a standard client retries a 503 for GET and sends one idempotency key on every attempt of a keyed POST")
    func behaviour() async throws {
        let stub = StubTransport(responses: [.status(503), .json("{}"), .status(503), .json("{}")])
        let client = APIClient(environment: APIEnvironment(name: "stub", baseURL: try #require(URL(string: "http://stub.test"))))
        {
            $0.transport = stub
            $0.interceptors = .standard(retry: RetryInterceptor(clock: TestClock(), random: { 0 }))
        }
        let _: EmptyResponse = try await client.send(.get("/a"))
        let post = Request<EmptyResponse>.post("/orders", body: ["sku": "x"]).policy(.standard.with(\.idempotency, .automatic))
        _ = try await client.send(post)
        let requests = stub.requests
        #expect(requests.count == 4)
        let keys = requests[2...].map { $0.value(forHTTPHeaderField: "Idempotency-Key") }
        #expect(keys[0] != nil && keys[0] == keys[1])
        #expect(requests[0].value(forHTTPHeaderField: "X-Request-ID") == requests[1].value(forHTTPHeaderField: "X-Request-ID"))
    }
}

@Suite("Logout through the standard pipeline")
struct StandardPipelineLogoutTests {
    @Test("resetSession signs out of the token manager held by the AuthInterceptor")
    func resetSessionClearsTokens() async throws {
        let store = InMemoryTokenStore()
        let grant = RefreshTokenGrant.oauth2(tokenURL: try #require(URL(string: "http://127.0.0.1:9/auth/refresh")))
        let tokens = TokenManager(store: store, transport: StubTransport(responses: [HTTPResponse]()), grant: grant)
        try await tokens.signIn(AuthTokens(accessToken: "A", refreshToken: "R"))
        #expect(try await tokens.isSignedIn())
        let client = APIClient(environment: APIEnvironment(name: "stub", baseURL: try #require(URL(string: "http://stub.test"))))
        {
            $0.transport = StubTransport(responses: [HTTPResponse]())
            $0.interceptors = .standard(tokenManager: tokens)
        }
        try await client.resetSession()
        #expect(try await tokens.isSignedIn() == false)
        #expect(store.read() == nil)
    }
}

@Suite("Deadline seen by interceptors")
struct DeadlineReportingTests {
    @Test("a call cut by its deadline is logged and counted as a timeout, not a cancellation")
    func deadlineIsTimedOutForLoggingAndMetrics() async throws {
        let stub = StubTransport { _ in
            try await Task.sleep(for: .seconds(30))  // never answers within the deadline; cancelled by it
            return .status(200)
        }
        let metrics = CapturingMetricsSink()
        let logger = CapturingNetworkLogger(minimumLevel: .debug)
        let client = APIClient(environment: APIEnvironment(name: "stub", baseURL: try #require(URL(string: "http://stub.test"))))
        {
            $0.transport = stub
            $0.interceptors = .standard(logger: logger, metrics: metrics)
        }
        let request = Request<Void>.get("/slow").policy(.standard.with(\.deadline, .milliseconds(50)).with(\.retry, .none))
        await #expect(throws: NetworkError.self) { try await client.send(request) }
        do {
            try await client.send(request)
        } catch let error as NetworkError {
            guard case .timedOut(nil) = error else {
                Issue.record("expected timedOut(nil), got \(error)")
                return
            }
        }
        let kinds = metrics.events.map(\.errorKind)
        #expect(kinds == ["timedOut", "timedOut"], "metrics: \(kinds)")
        let text = logger.entries.map(\.text).joined(separator: "\n")
        #expect(!text.contains("cancelled"), "log: \(text)")
    }
}

@Suite("Request building edge cases")
struct RequestBuildingEdgeCaseTests {
    @Test("a GET or HEAD with a body is an invalid request and sends nothing", arguments: [HTTPMethod.get, .head])
    func bodyOnGet(method: HTTPMethod) async throws {
        let stub = StubTransport { _ in .status(200) }
        let client = APIClient(environment: APIEnvironment(name: "stub", baseURL: try #require(URL(string: "http://stub.test"))))
        {
            $0.transport = stub
        }
        let request = Request<Void>(method: method, path: "/search", body: .json(["q": "lamp"]))
        do {
            try await client.send(request)
            Issue.record("expected invalidRequest")
        } catch let error as NetworkError {
            guard case .invalidRequest(let reason) = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(reason.contains("must not have a body"))
        }
        #expect(stub.requestCount == 0)
    }
}

@Suite("Dot-segments in endpoint paths")
struct DotSegmentTests {
    @Test("a '.' or '..' segment is an invalid request and nothing is sent", arguments: ["/items/../admin", "/items/./1", "/.."])
    func dotSegmentsAreRefused(path: String) async throws {
        let stub = StubTransport { _ in .status(200) }
        let client = APIClient(
            environment: APIEnvironment(name: "stub", baseURL: try #require(URL(string: "http://stub.test/v1")))
        ) {
            $0.transport = stub
        }
        do {
            try await client.send(Request<Void>.get(path))
            Issue.record("expected invalidRequest for \(path)")
        } catch let error as NetworkError {
            guard case .invalidRequest(let reason) = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(reason.contains("segment"))
        }
        #expect(stub.requestCount == 0)
    }

    @Test("dots inside a segment are ordinary characters")
    func dotsInsideSegments() async throws {
        let stub = StubTransport { _ in .status(204) }
        let client = APIClient(
            environment: APIEnvironment(name: "stub", baseURL: try #require(URL(string: "http://stub.test/v1")))
        ) {
            $0.transport = stub
        }
        try await client.send(Request<Void>.get("/files/report..v2.pdf/.well-known"))
        #expect(stub.requests.first?.url?.path == "/v1/files/report..v2.pdf/.well-known")
    }
}
