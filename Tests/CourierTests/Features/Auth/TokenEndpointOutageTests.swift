import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension AuthTests {
    /// The token endpoint fails transiently (503, 429, time-outs) while calls need a new token:
    /// one refresh per burst, a remembered cool-down, and the API host's circuit breaker untouched.
    /// Every proof is a count of what reached the stub server.
    @Suite(.timeLimit(.minutes(1))) struct TokenEndpointOutageTests {
        static let start = Date(timeIntervalSince1970: 1_800_000_000)
        static let meURL = AuthFixture.baseURL.appendingPathComponent("me")

        /// A stub API on `api.example.test` whose token endpoint (`/v1/auth/refresh`, the same
        /// host) answers what `refreshAnswer` returns, after `refreshGate` opens when given;
        /// `GET /v1/me` answers 200 for `valid` and 401 otherwise, after `resourceGate` opens; any
        /// other path answers 200.
        final class Server: Sendable {
            let refreshAnswer: Locked<@Sendable () throws -> HTTPResponse>
            let refreshGate: AsyncGate?
            let resourceGate: AsyncGate?
            let valid = Locked<Set<String>>(["fresh"])
            let transport: StubTransport

            init(
                refreshGate: AsyncGate? = nil, resourceGate: AsyncGate? = nil,
                refresh: @escaping @Sendable () throws -> HTTPResponse
            ) {
                let answer = Locked<@Sendable () throws -> HTTPResponse>(refresh)
                let valid = self.valid
                refreshAnswer = answer
                self.refreshGate = refreshGate
                self.resourceGate = resourceGate
                transport = StubTransport { request in
                    if request.url?.path == "/v1/auth/refresh" {
                        if let refreshGate { await refreshGate.wait() }
                        var response = try answer.current()
                        response.url = request.url
                        return response
                    }
                    guard request.url?.path == "/v1/me" else { return HTTPResponse(statusCode: 200, url: request.url) }
                    if let resourceGate { await resourceGate.wait() }
                    let header = request.value(forHTTPHeaderField: "Authorization") ?? ""
                    let token = header.hasPrefix("Bearer ") ? String(header.dropFirst(7)) : ""
                    guard valid.current.contains(token) else {
                        return HTTPResponse(
                            statusCode: 401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#],
                            url: request.url)
                    }
                    return HTTPResponse(statusCode: 200, body: Data(#"{"ok":true}"#.utf8), url: request.url)
                }
            }

            var refreshes: Int { transport.requests.filter { $0.url?.path == "/v1/auth/refresh" }.count }
            var meRequests: Int { transport.requests.filter { $0.url?.path == "/v1/me" }.count }
            var thingsRequests: Int { transport.requests.filter { $0.url?.path == "/v1/things" }.count }

            static func unavailable(retryAfter: String? = nil) -> HTTPResponse {
                var headers: HTTPHeaders = ["Content-Type": "application/json"]
                if let retryAfter { headers.replace("Retry-After", with: retryAfter) }
                return HTTPResponse(
                    statusCode: 503, headers: headers, body: Data(#"{"error":"temporarily_unavailable"}"#.utf8))
            }

            static let tokens = HTTPResponse.json(
                #"{"access_token":"fresh","refresh_token":"r2","token_type":"Bearer","expires_in":3600}"#)
        }

        /// The app of the report: `.standard(...)` with retries, the retry budget and the standard
        /// circuit breaker (or `breaker`), and a token manager on the manager clock `now`.
        static func app(
            _ server: Server, tokens: AuthTokens, now: Locked<Date>, breaker: CircuitBreaker = .standard
        ) -> (APIClient, TokenManager) {
            let manager = TokenManager(
                store: InMemoryTokenStore(tokens), transport: server.transport,
                grant: .oauth2(tokenURL: AuthFixture.tokenURL), now: { now.current })
            let client = APIClient(environment: AuthFixture.environment) {
                $0.transport = server.transport
                $0.interceptors = .standard(
                    tokenManager: manager, retry: RetryInterceptor(clock: TestClock(), random: { 1 }, circuitBreaker: breaker))
            }
            return (client, manager)
        }

        static let me = Request<HTTPResponse>(method: .get, path: "/me", policy: .authorizedRead) { response, _ in response }
        static let things = Request<HTTPResponse>(method: .get, path: "/things", policy: .standard) { response, _ in response }

        static func expired(_ now: Date) -> AuthTokens {
            AuthTokens(accessToken: "stale", refreshToken: "r1", expiresAt: now.addingTimeInterval(-60))
        }

        // MARK: One refresh per burst

        /// The report: 10 calls with an expired token while the token endpoint answers 503 sent
        /// 3 refreshes and 12 `GET /me`. Now: one refresh, no `GET /me`, and every call gets
        /// the refresh's 503.
        @Test func aBurstWithAnExpiredTokenSendsOneRefreshAndNoRequestWhenTheTokenEndpointAnswers503()
            async throws
        {
            let gate = AsyncGate()
            let server = Server(refreshGate: gate) { Server.unavailable() }
            let now = Locked(Self.start)
            let (client, manager) = Self.app(server, tokens: Self.expired(Self.start), now: now)
            let calls = (0..<10).map { _ in Task { try await client.send(Self.me) } }
            await AuthFixture.eventually { await manager.pendingRefreshWaiters == 10 }
            await gate.open()
            for call in calls {
                let result = await call.result
                guard case .failure(let error as NetworkError) = result else {
                    Issue.record("expected the refresh's failure, got \(result)")
                    continue
                }
                #expect(error.kind == .server)
                #expect(error.statusCode == 503)
            }
            #expect(server.refreshes == 1)
            #expect(server.meRequests == 0)
            #expect(try await manager.isSignedIn())
        }

        /// A token the client cannot judge (no expiry): all 10 calls are sent and refused with
        /// 401, one refresh serves them all and fails, and none of them is sent again.
        @Test func aBurstRefusedWith401SendsOneRefreshAndNoSecondRequestWhenTheTokenEndpointAnswers503()
            async throws
        {
            let refreshGate = AsyncGate()
            let resourceGate = AsyncGate()
            let server = Server(refreshGate: refreshGate, resourceGate: resourceGate) { Server.unavailable() }
            let now = Locked(Self.start)
            let opaque = AuthTokens(accessToken: "stale", refreshToken: "r1")
            let (client, manager) = Self.app(server, tokens: opaque, now: now)
            let calls = (0..<10).map { _ in Task { try await client.send(Self.me) } }
            await AuthFixture.eventually { server.meRequests == 10 }
            await resourceGate.open()
            await AuthFixture.eventually { await manager.pendingRefreshWaiters == 10 }
            await refreshGate.open()
            for call in calls {
                let result = await call.result
                guard case .failure(let error as NetworkError) = result else {
                    Issue.record("expected the refresh's failure, got \(result)")
                    continue
                }
                #expect(error.statusCode == 503)
            }
            #expect(server.refreshes == 1)
            #expect(server.meRequests == 10)
            #expect(try await manager.isSignedIn())
        }

        // MARK: The hold after a transient failure

        /// Calls that need a refresh right after one failed fail at once — nothing sent, the
        /// user still signed in — until the hold (0.5–1 s after a first failure without
        /// `Retry-After`) ends; then the next call refreshes.
        @Test func callsDuringTheHoldFailFastWithBackendUnavailableAndSendNothing() async throws {
            let server = Server { Server.unavailable() }
            let now = Locked(Self.start)
            let (client, manager) = Self.app(server, tokens: Self.expired(Self.start), now: now)
            let events = manager.events()
            _ = try? await client.send(Self.me)
            #expect(server.refreshes == 1)

            now.set(Self.start.addingTimeInterval(0.4))  // within the shortest first hold (0.5 s)
            for _ in 0..<5 {
                do {
                    _ = try await client.send(Self.me)
                    Issue.record("expected backendUnavailable")
                } catch NetworkError.backendUnavailable(let host, let retryAfter) {
                    #expect(host == "api.example.test")
                    #expect(retryAfter > .zero && retryAfter <= .milliseconds(600))
                }
            }
            #expect(server.refreshes == 1)
            #expect(server.meRequests == 0)
            #expect(try await manager.isSignedIn())

            server.refreshAnswer.set { Server.tokens }
            now.set(Self.start.addingTimeInterval(1))  // the longest first hold is over
            #expect(try await client.send(Self.me).statusCode == 200)
            #expect(server.refreshes == 2)
            #expect(server.meRequests == 1)
            var iterator = events.makeAsyncIterator()
            #expect(await iterator.next() == .refreshed)  // no sessionExpired before it
        }

        /// The token endpoint's `Retry-After` (on a 503 or a 429) is the hold.
        @Test(arguments: [503, 429])
        func theTokenEndpointsRetryAfterSetsTheHold(_ status: Int) async throws {
            let server = Server {
                var response = Server.unavailable(retryAfter: "30")
                response.statusCode = status
                return response
            }
            let now = Locked(Self.start)
            let (client, _) = Self.app(server, tokens: Self.expired(Self.start), now: now)
            _ = try? await client.send(Self.me)
            now.set(Self.start.addingTimeInterval(29))
            do {
                _ = try await client.send(Self.me)
                Issue.record("expected backendUnavailable")
            } catch NetworkError.backendUnavailable(_, let retryAfter) {
                #expect(retryAfter == .seconds(1))
            }
            #expect(server.refreshes == 1)
            server.refreshAnswer.set { Server.tokens }
            now.set(Self.start.addingTimeInterval(30))
            #expect(try await client.send(Self.me).statusCode == 200)
            #expect(server.refreshes == 2)
        }

        /// Failures in a row lengthen the hold (the project's `Backoff`, doubling): the second
        /// lasts 1–2 s. A success starts over.
        @Test func failuresInARowLengthenTheHold() async throws {
            let server = Server { Server.unavailable() }
            let now = Locked(Self.start)
            let (client, _) = Self.app(server, tokens: Self.expired(Self.start), now: now)
            _ = try? await client.send(Self.me)
            now.set(Self.start.addingTimeInterval(1))
            _ = try? await client.send(Self.me)  // second failure in a row, at t = 1 s
            #expect(server.refreshes == 2)
            now.set(Self.start.addingTimeInterval(1.9))  // within the shortest second hold (1 s)
            _ = try? await client.send(Self.me)
            #expect(server.refreshes == 2)
            now.set(Self.start.addingTimeInterval(3))  // the longest second hold (2 s) is over
            _ = try? await client.send(Self.me)
            #expect(server.refreshes == 3)
        }

        /// A device without a network path is not held back: its refresh goes out as soon as
        /// the network is back.
        @Test func aRefreshThatFailedOfflineIsNotHeldBack() async throws {
            let server = Server { throw URLError(.notConnectedToInternet) }
            let now = Locked(Self.start)
            let (client, _) = Self.app(server, tokens: Self.expired(Self.start), now: now)
            do {
                _ = try await client.send(Self.me)
                Issue.record("expected offline")
            } catch let error as NetworkError {
                #expect(error.kind == .offline)
            }
            server.refreshAnswer.set { Server.tokens }
            #expect(try await client.send(Self.me).statusCode == 200)
            #expect(server.refreshes == 2)
        }

        /// A token due for a proactive refresh but not yet expired keeps being used during the
        /// hold, without asking the token endpoint again.
        @Test func aStillValidTokenIsUsedWithoutARefreshDuringTheHold() async throws {
            let server = Server { Server.unavailable() }
            server.valid.set(["fresh", "stale"])
            let now = Locked(Self.start)
            let expiring = AuthTokens(accessToken: "stale", refreshToken: "r1", expiresAt: Self.start.addingTimeInterval(10))
            let (client, _) = Self.app(server, tokens: expiring, now: now)
            #expect(try await client.send(Self.me).statusCode == 200)
            #expect(try await client.send(Self.me).statusCode == 200)
            #expect(server.refreshes == 1)
            #expect(server.meRequests == 2)
        }

        /// A token the server refused with 401 is not sent again while refreshes are held back,
        /// and after the hold it is refreshed before the next request — even with an unknown expiry.
        @Test func aTokenRefusedWith401IsNeverSentAgainAndIsRefreshedFirstAfterTheHold() async throws {
            let server = Server { Server.unavailable() }
            let now = Locked(Self.start)
            let (client, _) = Self.app(server, tokens: AuthTokens(accessToken: "stale", refreshToken: "r1"), now: now)
            _ = try? await client.send(Self.me)  // 401, refresh 503
            #expect(server.meRequests == 1)
            do {
                _ = try await client.send(Self.me)
                Issue.record("expected backendUnavailable")
            } catch let error as NetworkError {
                #expect(error.kind == .backendUnavailable)
            }
            #expect(server.meRequests == 1)
            #expect(server.refreshes == 1)

            server.refreshAnswer.set { Server.tokens }
            now.set(Self.start.addingTimeInterval(1))
            #expect(try await client.send(Self.me).statusCode == 200)
            let sent = server.transport.requests.map {
                "\($0.url?.path ?? "") \($0.value(forHTTPHeaderField: "Authorization") ?? "")"
            }
            #expect(sent == ["/v1/me Bearer stale", "/v1/auth/refresh ", "/v1/auth/refresh ", "/v1/me Bearer fresh"])
        }

        /// A device clock set back during the hold ends it (the hold never outlasts its length).
        @Test func aClockSetBackEndsTheHold() async throws {
            let server = Server { Server.unavailable(retryAfter: "300") }
            let now = Locked(Self.start)
            let (client, _) = Self.app(server, tokens: Self.expired(Self.start.addingTimeInterval(-3600)), now: now)
            _ = try? await client.send(Self.me)
            now.set(Self.start.addingTimeInterval(-60))
            _ = try? await client.send(Self.me)
            #expect(server.refreshes == 2)
        }

        // MARK: The API's circuit breaker

        /// The token endpoint lives on the API's host and answers 503 with `Retry-After`, more
        /// times in a row than the breaker tolerates: the API's other endpoints still answer, and
        /// its `Retry-After` does not pause them.
        @Test func aTokenEndpointOnTheAPIHostDoesNotOpenTheAPIsBreakerNorPauseIt() async throws {
            let server = Server { Server.unavailable(retryAfter: "5") }
            let now = Locked(Self.start)
            let breaker = CircuitBreaker(
                consecutiveFailures: 2, coolDown: Backoff(initialDelay: .seconds(30), maximumDelay: .seconds(60), jitter: .none))
            let (client, _) = Self.app(server, tokens: Self.expired(Self.start), now: now, breaker: breaker)
            for _ in 0..<3 {
                _ = try? await client.send(Self.me)
                now.withLock { $0 += 10 }  // past the token endpoint's Retry-After: each call refreshes
            }
            #expect(server.refreshes == 3)
            let healthy = try await client.send(Self.things)
            #expect(healthy.statusCode == 200)
            #expect(server.thingsRequests == 1)
        }
    }
}
