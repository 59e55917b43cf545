import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension AuthTests {
    /// `AuthInterceptor` in a pipeline over the fake auth server.
    @Suite(.timeLimit(.minutes(1))) struct AuthInterceptorTests {
        struct Me: Decodable, Sendable { var jti: String }

        /// Records the paths of the requests that pass through the pipeline below Auth.
        final class PathRecorder: Interceptor {
            let paths = Locked<[String]>([])
            func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
                paths.withLock { $0.append(request.url?.path ?? "") }
                return try await next(request)
            }
        }

        static func client(
            _ transport: StubTransport, manager: TokenManager, recorder: PathRecorder = PathRecorder(),
            clock: TestClock = TestClock()
        ) -> APIClient {
            APIClient(environment: AuthFixture.environment) {
                $0.transport = transport
                $0.interceptors = [
                    RetryInterceptor(clock: clock, random: { 0 }),
                    AuthInterceptor(tokenManager: manager),
                    recorder,
                    IdempotencyInterceptor(),
                ]
            }
        }

        static func me(_ auth: AuthRequirement = .required) -> Request<Me> {
            Request<Me>.get("/me").policy(EndpointPolicy.authorizedRead.with(\.auth, auth))
        }

        @Test func requiredAddsTheBearerToken() async throws {
            let server = FakeAuthServer()
            let transport = server.makeTransport()
            let tokens = server.signIn()
            let manager = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore(tokens))
            let me = try await Self.client(transport, manager: manager).send(Self.me())
            #expect(me.jti == "jti-1")
            #expect(transport.requests.first?.value(forHTTPHeaderField: "Authorization") == "Bearer \(tokens.accessToken)")
        }

        @Test func requiredWithoutSignInFailsLocallyWithoutSending() async throws {
            let transport = FakeAuthServer().makeTransport()
            let manager = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore())
            do {
                _ = try await Self.client(transport, manager: manager).send(Self.me())
                Issue.record("expected signedOut")
            } catch let error as NetworkError {
                #expect(error == .signedOut)
            }
            #expect(transport.requestCount == 0)
        }

        @Test func optionalGoesAnonymousWhenSignedOutAndAuthorizedWhenSignedIn() async throws {
            let server = FakeAuthServer()
            let transport = server.makeTransport()
            let store = InMemoryTokenStore()
            let manager = FakeAuthServer.tokenManager(transport, store: store)
            let client = Self.client(transport, manager: manager)
            let anonymous = Request<HTTPResponse>(
                method: .get, path: "/feed", policy: EndpointPolicy.standard.with(\.auth, .optional)
            ) { r, _ in r }
            _ = try? await client.send(anonymous)
            #expect(transport.requests.last?.value(forHTTPHeaderField: "Authorization") == nil)
            let tokens = server.signIn()
            try await manager.signIn(tokens)
            _ = try await client.send(anonymous)
            #expect(transport.requests.last?.value(forHTTPHeaderField: "Authorization") == "Bearer \(tokens.accessToken)")
        }

        @Test func noneNeverSendsTheToken() async throws {
            let server = FakeAuthServer()
            let transport = server.makeTransport()
            let manager = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore(server.signIn()))
            let request = Request<HTTPResponse>(method: .get, path: "/public", policy: .standard) { r, _ in r }
            _ = try? await Self.client(transport, manager: manager).send(request)
            #expect(transport.requestCount == 1)
            #expect(transport.requests.first?.value(forHTTPHeaderField: "Authorization") == nil)
        }

        @Test func unauthorizedIsRefreshedOnceAndRetriedWithTheNewToken() async throws {
            let server = FakeAuthServer()
            let transport = server.makeTransport()
            let initial = server.signIn()
            let store = InMemoryTokenStore(initial)
            let manager = FakeAuthServer.tokenManager(transport, store: store)
            server.expireAllAccessTokens()
            let recorder = PathRecorder()
            let me = try await Self.client(transport, manager: manager, recorder: recorder).send(Self.me())
            #expect(me.jti == "jti-2")
            #expect(transport.requests.map { $0.url?.path ?? "" } == ["/v1/me", "/v1/auth/refresh", "/v1/me"])
            // The refresh went straight to the transport: nothing below Auth saw it.
            #expect(recorder.paths.current == ["/v1/me", "/v1/me"])
            let authorizations = transport.requests.map { $0.value(forHTTPHeaderField: "Authorization") }
            #expect(authorizations == ["Bearer \(initial.accessToken)", nil, "Bearer \(store.read()?.accessToken ?? "")"])
        }

        /// Alice's request is answered 401 after Bob signed in: it is not sent again with Bob's
        /// token (it would act as Bob); its 401 is the answer.
        @Test func aRequestOfAnEarlierSignInIsNeverResentWithTheNextUsersToken() async throws {
            let managerBox = Locked<TokenManager?>(nil)
            let transport = StubTransport { request in
                if request.url?.path == "/token" { return .json(#"{"access_token":"refreshed","token_type":"Bearer"}"#) }
                switch request.value(forHTTPHeaderField: "Authorization") {
                case "Bearer alice-access":
                    // Alice's session ends on the server and Bob signs in while her request is out.
                    try await managerBox.current?.signIn(AuthTokens(accessToken: "bob-access", refreshToken: "bob-refresh"))
                    return HTTPResponse(statusCode: 401, headers: ["WWW-Authenticate": "Bearer"], url: request.url)
                default:
                    return .json(#"{"jti":"as bob"}"#)
                }
            }
            let manager = FakeAuthServer.tokenManager(
                transport, store: InMemoryTokenStore(AuthTokens(accessToken: "alice-access", refreshToken: "alice-refresh")))
            managerBox.set(manager)
            let client = Self.client(transport, manager: manager)
            let error = await #expect(throws: NetworkError.self) {
                try await client.send(Request<Me>.get("/me").policy(EndpointPolicy.authorizedRead))
            }
            #expect(error?.kind == .unauthorized)
            #expect(transport.requests.map { $0.value(forHTTPHeaderField: "Authorization") } == ["Bearer alice-access"])
            // Bob's own calls go out with his token.
            #expect(try await client.send(Request<Me>.get("/me").policy(EndpointPolicy.authorizedRead)).jti == "as bob")
        }

        /// The app and its extension share one store; the server rotates refresh tokens and has
        /// expired every access token. The extension's call refreshes first (refresh-1 →
        /// refresh-2). The app's call is answered 401, its refresh of the spent refresh-1 is
        /// refused, and it is sent again with the extension's access token: the same sign-in.
        @Test func aCallAnswered401AfterAnotherProcessRotatedTheRefreshTokenIsSentAgainWithItsToken() async throws {
            let server = FakeAuthServer()
            let store = InMemoryTokenStore()
            let appTransport = server.makeTransport()
            let extensionTransport = server.makeTransport()
            let app = FakeAuthServer.tokenManager(appTransport, store: store)
            try await app.signIn(server.signIn())
            let appExtension = FakeAuthServer.tokenManager(extensionTransport, store: store)
            let appClient = Self.client(appTransport, manager: app)
            let extensionClient = Self.client(extensionTransport, manager: appExtension)
            let me = Request<Me>.get("/me").policy(EndpointPolicy.authorizedRead)
            #expect(try await appClient.send(me).jti == "jti-1")
            server.expireAllAccessTokens()

            #expect(try await extensionClient.send(me).jti == "jti-2")
            #expect(try await appClient.send(me).jti == "jti-2")  // not NetworkError.unauthorized

            #expect(server.refreshCalls == 2)  // the extension's, and the app's refused one
            let appCalls = appTransport.requests.filter { $0.url?.path.hasSuffix("/me") == true }
            #expect(appCalls.count == 3)  // jti-1; then 401 and the resend
            #expect(try await app.isSignedIn())
        }

        /// Another process (the app, while this is its extension) signs Bob in; this one reloads
        /// the shared store while Alice's request is out: her 401 is the answer, not a resend as Bob.
        @Test func aRequestIsNeverResentWithAnotherUsersTokenReloadedFromTheStore() async throws {
            let store = InMemoryTokenStore(AuthTokens(accessToken: "alice-access", refreshToken: "alice-refresh"))
            let managerBox = Locked<TokenManager?>(nil)
            let transport = StubTransport { request in
                if request.url?.path.hasSuffix("auth/refresh") == true {
                    return .json(#"{"access_token":"refreshed","token_type":"Bearer"}"#)
                }
                switch request.value(forHTTPHeaderField: "Authorization") {
                case "Bearer alice-access":
                    store.write(AuthTokens(accessToken: "bob-access", refreshToken: "bob-refresh"))
                    await managerBox.current?.reloadFromStore()
                    return HTTPResponse(statusCode: 401, headers: ["WWW-Authenticate": "Bearer"], url: request.url)
                default:
                    return .json(#"{"jti":"as bob"}"#)
                }
            }
            let manager = FakeAuthServer.tokenManager(transport, store: store)
            managerBox.set(manager)
            let client = Self.client(transport, manager: manager)
            let error = await #expect(throws: NetworkError.self) {
                try await client.send(
                    Request<Me>.post("/messages", body: ["text": "from alice"]).policy(EndpointPolicy.authorizedWrite))
            }
            #expect(error?.kind == .unauthorized)
            #expect(transport.requests.map { $0.value(forHTTPHeaderField: "Authorization") } == ["Bearer alice-access"])
            #expect(try await client.send(Request<Me>.get("/me").policy(EndpointPolicy.authorizedRead)).jti == "as bob")
        }

        /// A one-shot streamed upload answered 401 `invalid_token` is returned without a resend,
        /// but the refused token is refreshed: the next upload carries the new one.
        @Test func aOneShotUploadAnswered401RefreshesTheTokenForTheNextCall() async throws {
            let refreshes = Locked(0)
            let stub = StubTransport { request in
                if request.url?.path.hasSuffix("auth/refresh") == true {
                    refreshes.withLock { $0 += 1 }
                    return .json(#"{"access_token":"new","refresh_token":"r2","token_type":"Bearer","expires_in":3600}"#)
                }
                if request.value(forHTTPHeaderField: "Authorization") == "Bearer new" { return .status(204) }
                return .status(401, headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
            }
            let manager = TokenManager(
                store: InMemoryTokenStore(), transport: stub, grant: .oauth2(tokenURL: AuthFixture.tokenURL))
            try await manager.signIn(AuthTokens(accessToken: "revoked", refreshToken: "r1"))
            let client = CoreFixture.client(stub, environment: AuthFixture.environment) {
                $0.interceptors = [AuthInterceptor(tokenManager: manager)]
            }
            func upload() async throws {
                let body = RequestBody.stream(.once(InputStream(data: Data("abc".utf8))), contentType: "text/plain")
                try await client.send(
                    Request<Void>(method: .post, path: "/upload", body: body).policy(.standard.with(\.auth, .required)))
            }
            let error = await #expect(throws: NetworkError.self) { try await upload() }
            #expect(error?.kind == .unauthorized)
            try await upload()
            try await upload()
            let uploads = stub.requests.filter { $0.url?.path.hasSuffix("/upload") == true }
            #expect(
                uploads.map { $0.value(forHTTPHeaderField: "Authorization") } == ["Bearer revoked", "Bearer new", "Bearer new"])
            #expect(refreshes.current == 1)
        }

        @Test func unauthorizedFromAnotherOriginAfterARedirectRefreshesNothing() async throws {
            // The API redirects to a CDN, which answers 401: the token never went there (the
            // redirect dropped it), so it was not refused, and no refresh helps.
            let server = FakeAuthServer()
            let transport = StubTransport { request in
                if request.url?.host == "cdn.elsewhere.test" {
                    return HTTPResponse(statusCode: 401, headers: ["WWW-Authenticate": "Bearer"], url: request.url)
                }
                if request.url?.path == "/v1/files/1" {
                    return HTTPResponse(
                        statusCode: 302, headers: ["Location": "https://cdn.elsewhere.test/f/1"], url: request.url)
                }
                return try await server.handle(request)
            }
            let manager = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore(server.signIn()))
            let client = Self.client(transport, manager: manager)
            let file = Request<Data>.get("/files/1").policy(EndpointPolicy.authorizedRead)
            for _ in 0..<3 {
                await #expect(throws: NetworkError.self) { try await client.send(file) }
            }
            #expect(server.refreshCalls == 0)
            #expect(transport.requestCount == 6, "each call: the API's 302 and the CDN's 401, nothing else")
            #expect(
                transport.requests.filter { $0.url?.host == "cdn.elsewhere.test" }.allSatisfy {
                    $0.value(forHTTPHeaderField: "Authorization") == nil
                })
        }

        @Test func unauthorizedFromTheSameOriginAfterARedirectStillRefreshes() async throws {
            let server = FakeAuthServer()
            let transport = StubTransport { request in
                if request.url?.path == "/v1/old-me" {
                    return HTTPResponse(statusCode: 301, headers: ["Location": "/v1/me"], url: request.url)
                }
                var response = try await server.handle(request)
                response.url = request.url
                return response
            }
            let manager = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore(server.signIn()))
            server.expireAllAccessTokens()
            let me = try await Self.client(transport, manager: manager).send(
                Request<Me>.get("/old-me").policy(EndpointPolicy.authorizedRead))
            #expect(me.jti == "jti-2")
            #expect(server.refreshCalls == 1)
        }

        @Test func secondUnauthorizedIsReturnedWithoutAnotherRefresh() async throws {
            let server = FakeAuthServer()
            let transport = server.makeTransport()
            let manager = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore(server.signIn()))
            server.enqueueResourceStatuses(401, 401, 401)
            do {
                _ = try await Self.client(transport, manager: manager).send(Self.me())
                Issue.record("expected unauthorized")
            } catch NetworkError.unauthorized(let failed) {
                #expect(failed.statusCode == 401)
            }
            #expect(server.refreshCalls == 1)
            #expect(transport.requestCount == 3)  // GET, refresh, GET
        }

        @Test func authRetryHappensOncePerCallAcrossRetries() async throws {
            // 401 → refresh → 503 → (retry) → 401: the call already spent its auth retry.
            let server = FakeAuthServer()
            let transport = server.makeTransport()
            let manager = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore(server.signIn()))
            server.enqueueResourceStatuses(401, 503, 401)
            do {
                _ = try await Self.client(transport, manager: manager).send(Self.me())
                Issue.record("expected unauthorized")
            } catch NetworkError.unauthorized {}
            #expect(server.refreshCalls == 1)
            #expect(transport.requests.map { $0.url?.path ?? "" } == ["/v1/me", "/v1/auth/refresh", "/v1/me", "/v1/me"])
        }

        @Test func aTransientRefreshFailureEndsTheCallWithItsOwnErrorAndKeepsTheSession() async throws {
            // 401 → refresh answered 503 (transient): the call ends with the refresh's 503 — not
            // the 401 of the refused token, and not a retry that would ask the token endpoint
            // again. The user stays signed in, and the first call after the token manager's hold
            // refreshes before sending anything: the refused token is not sent again.
            let now = Locked(Date())
            let server = FakeAuthServer(now: now.current)
            let failedOnce = Locked(false)
            let transport = StubTransport { request in
                if request.url?.path.hasSuffix("/auth/refresh") == true, !failedOnce.current {
                    failedOnce.set(true)
                    return .json(#"{"error":"temporarily_unavailable"}"#, status: 503)
                }
                return try await server.handle(request)
            }
            let manager = FakeAuthServer.tokenManager(
                transport, store: InMemoryTokenStore(server.signIn()), leeway: .zero, now: { now.current })
            server.expireAllAccessTokens()
            let client = Self.client(transport, manager: manager)
            do {
                _ = try await client.send(Self.me())
                Issue.record("expected the refresh's 503")
            } catch let error as NetworkError {
                #expect(error.kind == .server)
                #expect(error.statusCode == 503)
            }
            #expect(transport.requests.map { $0.url?.path ?? "" } == ["/v1/me", "/v1/auth/refresh"])
            #expect(try await manager.isSignedIn())

            now.set(now.current.addingTimeInterval(1))  // past the longest first hold
            let me = try await client.send(Self.me())
            #expect(me.jti == "jti-2")
            #expect(
                transport.requests.map { $0.url?.path ?? "" }
                    == ["/v1/me", "/v1/auth/refresh", "/v1/auth/refresh", "/v1/me"])
        }

        @Test func refusedRefreshSurfacesAsSessionExpired() async throws {
            let server = FakeAuthServer()
            let transport = server.makeTransport()
            let store = InMemoryTokenStore(server.signIn())
            let manager = FakeAuthServer.tokenManager(transport, store: store)
            server.expireAllAccessTokens()
            server.setRefreshMode(.status(400, body: #"{"error":"invalid_grant"}"#))
            do {
                _ = try await Self.client(transport, manager: manager).send(Self.me())
                Issue.record("expected sessionExpired")
            } catch NetworkError.sessionExpired {}
            #expect(store.read() == nil)
            // Signed out now: the next required call fails locally.
            do {
                _ = try await Self.client(transport, manager: manager).send(Self.me())
            } catch let error as NetworkError {
                #expect(error.kind == .signedOut)
            }
            #expect(transport.requestCount == 2)
        }

        /// Every call is in flight with the old token before any 401 comes back: all of them are
        /// refused, one refresh serves them all, each retries once with the new token.
        @Test(arguments: [5, 50])
        func parallelUnauthorizedCallsShareOneRefresh(_ count: Int) async throws {
            let refreshGate = AsyncGate()
            let resourceGate = AsyncGate()
            let server = FakeAuthServer(refreshGate: refreshGate, resourceGate: resourceGate)
            let transport = server.makeTransport()
            let initial = server.signIn()
            let manager = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore(initial))
            server.expireAllAccessTokens()
            let client = Self.client(transport, manager: manager)
            let calls = (0..<count).map { _ in Task { try await client.send(Self.me()) } }
            await AuthFixture.eventually { transport.requestCount == count }
            await resourceGate.open()
            await AuthFixture.eventually { await manager.pendingRefreshWaiters == count }
            await refreshGate.open()
            for call in calls { #expect(try await call.value.jti == "jti-2") }
            #expect(server.refreshCalls == 1)
            let paths = transport.requests.map { $0.url?.path ?? "" }
            #expect(paths.filter { $0 == "/v1/me" }.count == 2 * count)
            #expect(paths.filter { $0 == "/v1/auth/refresh" }.count == 1)
        }

        /// Calls that ask for a token while a refresh is running wait for it instead of sending
        /// the old token: no extra 401s.
        @Test func callsStartedDuringARefreshWaitForIt() async throws {
            let refreshGate = AsyncGate()
            let server = FakeAuthServer(refreshGate: refreshGate)
            let transport = server.makeTransport()
            let manager = FakeAuthServer.tokenManager(transport, store: InMemoryTokenStore(server.signIn()))
            server.expireAllAccessTokens()
            let client = Self.client(transport, manager: manager)
            let first = Task { try await client.send(Self.me()) }
            await AuthFixture.eventually { await manager.pendingRefreshWaiters == 1 }
            let later = (0..<10).map { _ in Task { try await client.send(Self.me()) } }
            await AuthFixture.eventually { await manager.pendingRefreshWaiters == 11 }
            await refreshGate.open()
            #expect(try await first.value.jti == "jti-2")
            for call in later { #expect(try await call.value.jti == "jti-2") }
            let paths = transport.requests.map { $0.url?.path ?? "" }
            #expect(paths.filter { $0 == "/v1/me" }.count == 12)  // 1 refused + 1 retry + 10 sent once
            #expect(server.refreshCalls == 1)
        }
    }
}
