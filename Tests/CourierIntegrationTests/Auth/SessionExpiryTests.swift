import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension AuthIntegrationTests {
    /// The refresh endpoint refuses (`invalid_grant`) or fails transiently (503).
    @Suite(.timeLimit(.minutes(2))) struct SessionExpiryTests {
        @Test(arguments: AuthSession.Mode.allCases)
        func invalidGrantClearsTheStorePublishesTheEventAndFailsEveryWaiter(mode: AuthSession.Mode) async throws {
            let session = try await AuthSession.start(mode: mode, refreshDelay: 0.2)
            let (status, _) = try await TestServers.control(
                "POST", "auth/config", namespace: session.namespace, json: ["refreshFails": "invalid_grant"])
            #expect(status == 200)
            let firstObserver = session.manager.events()
            let secondObserver = session.manager.events()

            let count = 10
            let request = mode == .proactive ? AuthSession.me : AuthSession.held("expiry")
            let calls = (0..<count).map { _ in Task { try await session.client.send(request) } }
            if mode == .reactive {
                try await session.waitUntilHeld(count, gate: "expiry")
                try await session.open("expiry")
            }
            for call in calls {
                let result = await call.result
                guard case .failure(NetworkError.sessionExpired) = result else {
                    Issue.record("expected sessionExpired, got \(result)")
                    continue
                }
            }

            #expect(session.store.read() == nil)
            let expected = SessionEvent.sessionExpired(
                TokenRefreshRejection(
                    statusCode: 400, error: "invalid_grant", errorDescription: "Forced refresh failure"))
            var first = firstObserver.makeAsyncIterator()
            var second = secondObserver.makeAsyncIterator()
            #expect(await first.next() == expected)
            #expect(await second.next() == expected)
            #expect(try await session.stats().refreshCalls == 1)

            // Signed out now: a required call fails locally, nothing reaches the server.
            let before = try await session.stats().int("totalRequests")
            do {
                _ = try await session.client.send(AuthSession.me)
                Issue.record("expected signedOut")
            } catch let error as NetworkError {
                #expect(error == .signedOut)
            }
            #expect(try await session.stats().int("totalRequests") == before)
        }

        @Test func transientRefreshFailureKeepsTheUserSignedIn() async throws {
            let skip = Locked<TimeInterval>(0)
            let session = try await AuthSession.start(mode: .proactive, now: { Date().addingTimeInterval(skip.current) })
            let events = session.manager.events()
            try await TestServers.control("POST", "auth/config", namespace: session.namespace, json: ["refreshFails": "503"])
            let noRetry = AuthSession.me.policy(EndpointPolicy.authorizedRead.with(\.retry, .none))
            do {
                _ = try await session.client.send(noRetry)
                Issue.record("expected the refresh's 503")
            } catch let error as NetworkError {
                #expect(error.statusCode == 503)
            }
            #expect(session.store.read() == session.signedIn)

            // The server recovers: the same (unspent) refresh token works, once the token manager's
            // hold after the failure (at most 1 s after a first one without Retry-After) is over.
            try await TestServers.control("POST", "auth/config", namespace: session.namespace, json: ["refreshFails": NSNull()])
            skip.set(2)
            let me = try await session.client.send(noRetry)
            #expect(me.username == "alice")
            let stats = try await session.stats()
            #expect(stats.refreshCalls == 2)
            #expect(stats.refreshSuccesses == 1)
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next() == .refreshed)  // no sessionExpired before it
        }

        @Test func transientRefreshFailureIsNotRetriedByTheCall() async throws {
            let session = try await AuthSession.start(mode: .proactive)
            try await TestServers.control("POST", "auth/config", namespace: session.namespace, json: ["refreshFails": "503"])
            // authorizedRead retries a 503 of its own request, not the token endpoint's: another
            // attempt would only refresh again. One refresh, no GET /me sent without a token.
            do {
                _ = try await session.client.send(AuthSession.me)
                Issue.record("expected the refresh's 503")
            } catch let error as NetworkError {
                #expect(error.statusCode == 503)
            }
            let stats = try await session.stats()
            #expect(stats.refreshCalls == 1)
            #expect(stats.requests("GET /me") == 0)
            #expect(session.store.read() == session.signedIn)
        }

        /// The report: 10 concurrent `GET /me` with an expired token while the token endpoint
        /// (on the API's host) answers 503 sent 3 refreshes and 12 `GET /me`, and opened the
        /// circuit breaker for the whole host. Now: one refresh, no `GET /me`, the API's other
        /// endpoints answer, calls during the token manager's hold send nothing, and after it the
        /// next call refreshes.
        @Test func aBurstWhileTheTokenEndpointAnswers503SendsOneRefreshAndLeavesTheAPIUsable() async throws {
            // The manager's clock stands still unless moved: the hold cannot end while the test
            // looks (however slow the machine).
            let frozen = Date()
            let skip = Locked<TimeInterval>(0)
            let session = try await AuthSession.start(
                mode: .proactive, refreshDelay: 0.3, now: { frozen.addingTimeInterval(skip.current) })
            try await TestServers.control("POST", "auth/config", namespace: session.namespace, json: ["refreshFails": "503"])
            let calls = (0..<10).map { _ in Task { try await session.client.send(AuthSession.me) } }
            for call in calls {
                let result = await call.result
                guard case .failure(let error as NetworkError) = result else {
                    Issue.record("expected the refresh's failure, got \(result)")
                    continue
                }
                // The refresh's 503; a call that started after it failed is held back instead.
                #expect(error.statusCode == 503 || error.kind == .backendUnavailable, "\(error)")
            }
            var stats = try await session.stats()
            #expect(stats.refreshCalls == 1)
            #expect(stats.requests("GET /me") == 0)

            // The breaker of the API's host is closed: a public endpoint answers.
            let items = try await session.client.send(Request<Data>.get("/items"))
            #expect(!items.isEmpty)
            #expect(try await session.stats().requests("GET /items") == 1)

            // During the hold: fails at once, nothing sent.
            do {
                _ = try await session.client.send(AuthSession.me)
                Issue.record("expected backendUnavailable")
            } catch let error as NetworkError {
                #expect(error.kind == .backendUnavailable)
            }
            stats = try await session.stats()
            #expect(stats.refreshCalls == 1)
            #expect(stats.requests("GET /me") == 0)
            #expect(session.store.read() == session.signedIn)

            // After it, with the endpoint back: one refresh, then the call.
            try await TestServers.control("POST", "auth/config", namespace: session.namespace, json: ["refreshFails": NSNull()])
            skip.set(2)
            #expect(try await session.client.send(AuthSession.me).username == "alice")
            stats = try await session.stats()
            #expect(stats.refreshCalls == 2)
            #expect(stats.requests("GET /me") == 1)
        }

        /// A token endpoint (a gateway in front of it) answering 503 with a message that repeats
        /// the refresh token it was sent: the call's error — its description, message and snippet,
        /// what an app logs or sends to its crash reporter — carried the refresh token in clear
        /// (`HTTP 503 … "upstream down, refresh_token 6WfM… not checked"`), where a 400 saying the
        /// same was scrubbed.
        @Test func aTokenEndpointFailureRepeatingTheRefreshTokenKeepsItOutOfTheErrorAndTheLog() async throws {
            let namespace = TestServers.makeNamespace("auth")
            let environment = try TestServers.apiEnvironment(namespace: namespace)
            let transport = TestTransport.make()
            let logger = CapturingNetworkLogger()
            let manager = TokenManager(
                store: InMemoryTokenStore(), transport: transport,
                grant: .oauth2(tokenURL: environment.baseURL.appendingPathComponent("auth/refresh")))
            let client = APIClient(environment: environment) {
                $0.transport = transport
                $0.interceptors = .standard(tokenManager: manager, logger: logger, retry: RetryInterceptor(clock: TestClock()))
            }
            let login = try await client.response(
                for: Request<OAuthTokenResponse>.post("/auth/login", body: AuthSession.Login(accessTtl: -60)))
            let tokens = login.value.tokens(serverDate: login.response.date)
            let refreshToken = try #require(tokens.refreshToken)
            try await manager.signIn(tokens)
            try await TestServers.control("POST", "auth/config", namespace: namespace, json: ["refreshFails": "503-echo"])

            let error: NetworkError
            do {
                let me = try await client.send(AuthSession.me)
                Issue.record("expected the refresh's 503, got \(me)")
                return
            } catch let failure as NetworkError {
                error = failure
            }
            #expect(error.statusCode == 503)
            // The server did repeat it: the raw body the app may parse still has it.
            let stats = ServerStats(try await TestServers.stats(namespace: namespace))
            #expect(stats.refreshCalls == 1)
            let body = String(decoding: error.failedResponse?.body ?? Data(), as: UTF8.self)
            #expect(body.contains(refreshToken))
            for (place, text) in [
                ("description", String(describing: error)), ("userMessage", error.userMessage),
                ("message", error.failedResponse?.message ?? ""), ("snippet", error.failedResponse?.snippet ?? ""),
                ("log", logger.text),
            ] {
                #expect(!text.contains(refreshToken), "the refresh token reached the \(place): \(text)")
            }
            #expect(logger.text.contains("503"))
        }
    }
}
