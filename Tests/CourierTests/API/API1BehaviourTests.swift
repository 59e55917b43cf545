import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

/// Issue 8 §1–2 over a stub transport: the behaviours the API 1.0 names promise.
@Suite struct API1BehaviourTests {
    static let environment = APIEnvironment(name: "test", baseURL: URL(string: "https://api.example.test/v1")!)

    static func client(
        _ stub: StubTransport, clock: TestClock = TestClock(), decider: RetryDecider? = nil,
        configure: (inout APIClient.Configuration) -> Void = { _ in }
    ) -> APIClient {
        APIClient(environment: environment) {
            $0.transport = stub
            $0.interceptors = .standard(retry: RetryInterceptor(clock: clock, random: { 0.5 }, decider: decider))
            configure(&$0)
        }
    }

    struct Terms: Error {}

    @Test func aDeciderCanWaitForSomethingAsyncAndThenRetryAFailureThePolicyWouldNot() async throws {
        let stub = StubTransport(responses: [.status(451), .status(200, body: "{}")])
        let asked = Locked(0)
        let decider = RetryDecider { failure, _ in
            asked.withLock { $0 += 1 }
            #expect(failure.proposal == .doNotRetry, "a 451 is not retryable by policy")
            await Task.yield()  // e.g. the user accepting new terms
            return failure.response?.statusCode == 451 ? .retry(after: .milliseconds(10)) : failure.proposal
        }
        let clock = TestClock()
        let response = try await Self.client(stub, clock: clock, decider: decider).response(for: Request<Data>.get("/x"))
        #expect(response.statusCode == 200)
        #expect(asked.current == 1)
        #expect(clock.sleeps == [.milliseconds(10)])
        #expect(response.context.retryRecords.map(\.delaySource) == [.decider])
    }

    @Test func aDeciderNeverUndercutsTheServersRetryAfter() async throws {
        let stub = StubTransport(responses: [.status(503, headers: ["Retry-After": "3"]), .status(200, body: "{}")])
        let clock = TestClock()
        let decider = RetryDecider { _, _ in .retry(after: .zero) }
        _ = try await Self.client(stub, clock: clock, decider: decider).send(Request<Data>.get("/x"))
        #expect(clock.sleeps == [.seconds(3)])
    }

    @Test func aDeciderCannotRetryAPlainPost() async throws {
        let stub = StubTransport(responses: [.status(503), .status(200)])
        let decider = RetryDecider { _, _ in .retry(after: .zero) }
        let error = await #expect(throws: NetworkError.self) {
            try await Self.client(stub, decider: decider).send(Request<Void>.post("/orders"))
        }
        #expect(error?.kind == .server)
        #expect(stub.requestCount == 1, "RFC 9110 §9.2.2: a POST without an idempotency key is sent once")
    }

    struct NotReady: RetryableError { var isRetryable: Bool { true } }

    @Test func aValidatorsRetryableErrorIsRetriedAndARejectedResponseIsNeverCached() async throws {
        let calls = Locked(0)
        let stub = StubTransport { _ in
            let n = calls.withLock {
                $0 += 1
                return $0
            }
            return .status(
                200, body: n == 1 ? #"{"ready":false}"# : #"{"ready":true}"#, contentType: "application/json",
                headers: ["Cache-Control": "max-age=60"])
        }
        let validator = AnyResponseValidator { response, _ in
            if response.bodySnippet().contains("false") { throw NotReady() }
        }
        let cache = HTTPCache()
        let client = APIClient(environment: Self.environment) {
            $0.transport = stub
            $0.validators = [validator]
            $0.interceptors = .standard(cache: cache, retry: RetryInterceptor(clock: TestClock(), random: { 0 }))
        }
        let first = try await client.send(Request<Data>.get("/job"))
        let second = try await client.response(for: Request<Data>.get("/job"))
        #expect(String(decoding: first, as: UTF8.self).contains("true"))
        #expect(stub.requestCount == 2)
        #expect(second.context.cacheOutcome == .hit)
    }

    @Test func aValidatorsOtherErrorIsADecodingFailureAndNotRetried() async throws {
        let stub = StubTransport { _ in .status(200, body: "{}") }
        let client = Self.client(stub) { $0.validators = [AnyResponseValidator { _, _ in throw Terms() }] }
        let error = await #expect(throws: NetworkError.self) { try await client.send(Request<Data>.get("/x")) }
        #expect(error?.kind == .decoding)
        #expect(stub.requestCount == 1)
    }

    @Test func minimumDurationHoldsAFastResultBack() async throws {
        let clock = TestClock(mode: .manual)
        let stub = StubTransport(responses: [.status(204), .status(500)])
        let client = Self.client(stub) { $0.clock = clock }
        let policy = EndpointPolicy.standard.with(\.minimumDuration, .seconds(2)).with(\.retry, .none)
        let success = Task { try await client.send(Request<Void>.post("/login", policy: policy)) }
        try await clock.waitForSleepers(count: 2)  // the deadline and the hold
        #expect(stub.requestCount == 1)
        clock.advance(by: .seconds(2))
        try await success.value
        let failure = Task { try await client.send(Request<Void>.post("/login", policy: policy)) }
        try await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(2))
        let result = await failure.result
        #expect(throws: NetworkError.self) { try result.get() }
        let holds = clock.sleeps.filter { $0 < .seconds(60) }
        #expect(holds.count == 2)
        #expect(holds.allSatisfy { $0 > .milliseconds(1500) && $0 <= .seconds(2) })
    }

    @Test func onStartRunsOnceWhenTheTransportIsReachedNotForACacheHit() async throws {
        let stub = StubTransport { _ in .status(200, body: "{}", headers: ["Cache-Control": "max-age=60"]) }
        let client = APIClient(environment: Self.environment) {
            $0.transport = stub
            $0.interceptors = .standard(cache: HTTPCache())
        }
        let started = Locked(0)
        let request = Request<Data>.get("/a").onStart { started.withLock { $0 += 1 } }
        _ = try await client.send(request)
        _ = try await client.send(request)
        #expect(started.current == 1)
    }

    @Test func expectingAcceptsExactlyTheGivenStatuses() async throws {
        let stub = StubTransport(responses: [.status(202), .status(200)])
        let client = Self.client(stub)
        try await client.send(Request<Void>.post("/jobs").expecting(202))
        let error = await #expect(throws: NetworkError.self) { try await client.send(Request<Void>.post("/jobs").expecting(202)) }
        #expect(error?.statusCode == 200)
    }

    @Test func errorsCompareByKindAndValueAndAreLocalizedErrors() {
        let lost = NetworkError.transport(URLError(.networkConnectionLost))
        #expect(lost == .transport(URLError(.networkConnectionLost)))
        #expect(lost != .transport(URLError(.cannotConnectToHost)))
        #expect(NetworkError.signedOut.kind == .signedOut)
        #expect(NetworkError.notCached.localizedDescription == NetworkError.notCached.userMessage)
        let failed = FailedResponse(HTTPResponse(statusCode: 503, headers: ["Retry-After": "120"]))
        #expect(NetworkError.server(failed).retryAfter == .seconds(120))
    }

    @Test func appMessagesReplaceTheEnglishOnesAndFallBack() {
        let saved = NetworkError.messages
        defer { NetworkError.messages = saved }
        NetworkError.messages = ErrorMessages([.offline: "Pas de connexion."])
        #expect(NetworkError.offline(URLError(.notConnectedToInternet)).userMessage == "Pas de connexion.")
        #expect(NetworkError.timedOut(nil).userMessage == "The request took too long.")
        NetworkError.messages = ErrorMessages { $0.kind == .timedOut ? "Trop long." : nil }
        #expect(NetworkError.timedOut(nil).errorDescription == "Trop long.")
    }

    @Test func aTokenManagerWithoutATransportRefreshesThroughItsClients() async throws {
        let stub = StubTransport { request in
            if request.url?.path.hasSuffix("/token") == true {
                return .status(200, body: #"{"access_token":"new","token_type":"Bearer","expires_in":300,"refresh_token":"r2"}"#)
            }
            let auth = request.value(forHTTPHeaderField: "Authorization")
            return auth == "Bearer new" ? .status(200, body: "{}") : .status(401)
        }
        let store = InMemoryTokenStore(AuthTokens(accessToken: "old", refreshToken: "r1"))
        let tokens = TokenManager(store: store, grant: .oauth2(tokenURL: URL(string: "https://auth.example.test/token")!))
        let client = Self.client(stub) { $0.interceptors = .standard(tokenManager: tokens) }
        _ = try await client.send(Request<Data>.get("/me", policy: .authorizedRead))
        #expect(stub.requests.map { $0.url?.path ?? "" } == ["/v1/me", "/token", "/v1/me"])
    }

    @Test func theStandardBuilderPassesACustomRedactorToLogging() async throws {
        let logger = CapturingNetworkLogger(minimumLevel: .debug)
        let redactor = Redactor(headers: RedactionList.defaultHeaders.union(["X-Tenant"]))
        let stub = StubTransport { _ in .status(200, body: "{}") }
        let client = Self.client(stub) { $0.interceptors = .standard(logger: logger, redactor: redactor) }
        _ = try await client.send(Request<Data>.get("/x", headers: ["X-Tenant": "acme-secret"]))
        let text = logger.text
        #expect(!text.contains("acme-secret"))
        #expect(text.contains("X-Tenant"))
    }

    @Test func everyPublicErrorIsALocalizedErrorWithItsDescription() {
        let errors: [any Error] = [
            EmptyBodyError(),
            TokenStoreError.failed("disk full"),
            TokenRefreshRejection(statusCode: 400, error: "invalid_grant", errorDescription: "Refresh token revoked"),
            PinningConfigurationError.missingBackupPin(host: "api.example.com"),
        ]
        for error in errors {
            #expect(!error.localizedDescription.contains("couldn"), "\(error)")
        }
        #expect(
            TokenRefreshRejection(statusCode: 400, error: "invalid_grant", errorDescription: "Refresh token revoked")
                .localizedDescription == "Refresh token revoked")
    }
}
