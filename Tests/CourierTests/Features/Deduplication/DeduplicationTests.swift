import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

extension CachingTests {
    @Suite struct Deduplication {
        let clock = ManualDate()

        /// Waits (bounded, without timers) until `condition` holds.
        private func eventually(_ condition: @Sendable () async -> Bool) async -> Bool {
            for _ in 0..<20_000 {
                if await condition() { return true }
                await Task.yield()
            }
            return await condition()
        }

        /// Alice's `GET /me`, held at a gate on the server, and Bob's answered at once: the client
        /// (`.standard(tokenManager:cache:)`) and the token manager signed in as Alice.
        struct TwoAccounts {
            struct Me: Codable, Sendable, Equatable { var user: String }
            let gate = Gate()
            let stub: StubTransport
            let tokens: TokenManager
            let client: APIClient
            let me = Request<Me>.get("/me").policy(.authorizedRead)

            init(cache: HTTPCache) {
                let gate = self.gate
                stub = StubTransport { request in
                    let auth = request.value(forHTTPHeaderField: "Authorization") ?? ""
                    if auth == "Bearer alice" { await gate.wait() }
                    return .json(auth == "Bearer alice" ? #"{"user":"alice"}"# : #"{"user":"bob"}"#)
                }
                tokens = TokenManager(
                    store: InMemoryTokenStore(AuthTokens(accessToken: "alice", refreshToken: "r")),
                    transport: stub, grant: .oauth2(tokenURL: URL(string: "https://auth.example.test/token")!))
                let (stub, tokens) = (stub, tokens)
                client = APIClient(
                    environment: APIEnvironment(name: "staging", baseURL: URL(string: "https://api.example.test")!)
                ) {
                    $0.transport = stub
                    $0.interceptors = .standard(tokenManager: tokens, cache: cache, retry: RetryInterceptor(clock: TestClock()))
                }
            }

            func signInBob() async throws { try await tokens.signIn(AuthTokens(accessToken: "bob", refreshToken: "r2")) }
        }

        /// Alice's `GET /me` is in flight; she signs out (`resetSession`) and Bob signs in. The
        /// partition (one per environment, as the environment docs recommend) does not tell them
        /// apart: Bob's call must still never join Alice's request.
        @Test func aCallAfterASessionResetNeverJoinsTheRequestOfTheSessionBefore() async throws {
            let accounts = TwoAccounts(cache: HTTPCache(partition: { "staging" }))
            let (client, me) = (accounts.client, accounts.me)
            let alice = Task { try await client.send(me) }
            while await accounts.gate.arrivals == 0 { await Task.yield() }
            try await client.resetSession()
            try await accounts.signInBob()
            let bob = Task { try await client.send(me) }
            for _ in 0..<2000 { await Task.yield() }  // time for Bob's call to reach the shared request
            await accounts.gate.open()
            _ = try? await alice.value
            #expect(try await bob.value == TwoAccounts.Me(user: "bob"))
        }

        /// Alice's `GET /me` is in flight when Bob signs in through the token manager itself (the
        /// README's sign-in; no `resetSession()`), or after Alice signed out with `signOut()`.
        /// Bob's identical call must be sent with Bob's token, never answered with Alice's data.
        @Test(arguments: [false, true])
        func aCallAfterAnotherSignInNeverJoinsTheRequestOfThePreviousAccount(signsOutFirst: Bool) async throws {
            let accounts = TwoAccounts(cache: HTTPCache())
            let (client, me, stub) = (accounts.client, accounts.me, accounts.stub)
            let alice = Task { try await client.send(me) }
            #expect(await eventually { await accounts.gate.arrivals == 1 })
            if signsOutFirst { try await accounts.tokens.signOut() }
            try await accounts.signInBob()
            // Bob's call must reach the transport itself while Alice's is still held; joined to
            // Alice's request, it would wait at her gate and get her answer.
            let bob = Task { try await client.send(me) }
            #expect(await eventually { stub.requestCount == 2 })
            await accounts.gate.open()
            _ = try? await alice.value
            #expect(try await bob.value == TwoAccounts.Me(user: "bob"))
            #expect(stub.requests.compactMap { $0.value(forHTTPHeaderField: "Authorization") } == ["Bearer alice", "Bearer bob"])
        }

        @Test func concurrentIdenticalGetsShareOneTransportCall() async throws {
            let clock = self.clock
            let gate = Gate()
            let stub = StubTransport { _ in
                await gate.wait()
                return CacheFixture.item(clock: clock, headers: ["Cache-Control": "no-cache"])
            }
            let cache = CacheFixture.cache(clock: clock)
            let dedup = DeduplicationInterceptor()
            let client = APIClient(environment: CacheFixture.environment) {
                $0.transport = stub
                $0.interceptors = [CacheInterceptor(cache: cache), dedup]
            }

            let results = try await withThrowingTaskGroup(of: Response<CacheFixture.Item>.self) { group in
                for _ in 0..<20 { group.addTask { try await client.response(for: CacheFixture.getItem()) } }
                // Release the shared request only once all twenty wait for it.
                #expect(await eventually { dedup.waitingCount == 20 })
                await gate.open()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(stub.requestCount == 1)
            #expect(results.count == 20)
            #expect(results.allSatisfy { $0.value == CacheFixture.Item(name: "lamp", version: 1) })
            let roles = results.compactMap { $0.context[DeduplicationRoleKey.self] }
            #expect(roles.filter { $0 == .primary }.count == 1)
            #expect(roles.filter { $0 == .joined }.count == 19)
        }

        @Test func cancellingOneCallerKeepsTheSharedRequestForTheOthers() async throws {
            let gate = Gate()
            let stub = StubTransport { _ in
                await gate.wait()
                try Task.checkCancellation()
                return .json(#"{"name":"lamp","version":1}"#)
            }
            let dedup = DeduplicationInterceptor()
            let client = APIClient(environment: CacheFixture.environment) {
                $0.transport = stub
                $0.interceptors = [dedup]
            }
            let first = Task { try await client.send(CacheFixture.getItem()) }
            #expect(await eventually { await gate.arrivals == 1 })
            let second = Task { try await client.send(CacheFixture.getItem()) }
            let third = Task { try await client.send(CacheFixture.getItem()) }
            #expect(await eventually { dedup.waitingCount == 3 })
            first.cancel()
            let firstResult = await first.result
            await gate.open()
            let secondValue = try await second.value
            let thirdValue = try await third.value

            #expect(throws: NetworkError.self) { try firstResult.get() }
            #expect(secondValue.name == "lamp" && thirdValue.name == "lamp")
            #expect(stub.requestCount == 1)
            #expect(dedup.inFlightCount == 0)
        }

        @Test func sharedRequestIsCancelledWhenTheLastCallerLeaves() async throws {
            let gate = Gate()
            let cancelled = Locked(false)
            let stub = StubTransport { _ in
                await gate.wait()
                cancelled.set(Task.isCancelled)
                try Task.checkCancellation()
                return .json(#"{"name":"lamp","version":1}"#)
            }
            let dedup = DeduplicationInterceptor()
            let client = APIClient(environment: CacheFixture.environment) {
                $0.transport = stub
                $0.interceptors = [dedup]
            }
            let calls = (0..<3).map { _ in Task { try await client.send(CacheFixture.getItem()) } }
            #expect(await eventually { await gate.arrivals == 1 })
            for call in calls { call.cancel() }
            for call in calls { _ = await call.result }
            #expect(dedup.inFlightCount == 0)
            await gate.open()
            #expect(await eventually { cancelled.current })
        }

        /// A list screen's `GET` with a 2 s deadline is in flight when a detail screen asks for the
        /// same resource with 30 s. Joined, the detail call was carried by the list's request,
        /// whose transport idle timeout is the list's (3 s): against a server answering after 6 s,
        /// it failed as timed out at 3 s, with 27 s of its own deadline left. It sends its own.
        @Test func aCallWithALongerDeadlineIsNotCarriedByAShorterDeadlinesRequest() async throws {
            struct Carried: Codable, Sendable { var timeout: Double }
            let gate = Gate()
            let stub = StubTransport { request in
                if request.timeoutInterval < 10 { await gate.wait() }
                return .json(#"{"timeout": \#(request.timeoutInterval)}"#)
            }
            let dedup = DeduplicationInterceptor()
            let client = APIClient(environment: CacheFixture.environment) {
                $0.transport = stub
                $0.interceptors = [dedup]
                $0.clock = TestClock(mode: .manual)  // the deadlines never pass on their own
            }
            func get(deadline: Duration) -> Request<Carried> {
                .get("/items/1", policy: .standard.with(\.deadline, deadline).with(\.retry, .none))
            }
            let list = Task { try await client.send(get(deadline: .seconds(2))) }
            #expect(await eventually { await gate.arrivals == 1 })
            let detail = Task { try await client.send(get(deadline: .seconds(30))) }

            #expect(await eventually { stub.requestCount == 2 })
            await gate.open()

            #expect(try await detail.value.timeout == 31)
            #expect(try await list.value.timeout == 3)
        }

        @Test func differentAccountsOrHeadersAreNotShared() async throws {
            let gate = Gate()
            let stub = StubTransport { _ in
                await gate.wait()
                return .json(#"{"name":"lamp","version":1}"#)
            }
            let partition = Locked("alice")
            let client = APIClient(environment: CacheFixture.environment) {
                $0.transport = stub
                $0.interceptors = [DeduplicationInterceptor(partition: { partition.current })]
            }
            let alice = Task { try await client.send(CacheFixture.getItem()) }
            #expect(await eventually { await gate.arrivals == 1 })
            partition.set("bob")
            let bob = Task { try await client.send(CacheFixture.getItem()) }
            let german = Task { try await client.send(CacheFixture.getItem(headers: ["Accept-Language": "de"])) }
            #expect(await eventually { await gate.arrivals == 3 })
            await gate.open()
            _ = try await (alice.value, bob.value, german.value)
            #expect(stub.requestCount == 3)
        }

        @Test func unsafeMethodsAreNeverShared() async throws {
            let stub = StubTransport { _ in .json("{}") }
            let client = APIClient(environment: CacheFixture.environment) {
                $0.transport = stub
                $0.interceptors = [DeduplicationInterceptor()]
            }
            async let a: Void = client.send(Request<Void>(method: .post, path: "/items"))
            async let b: Void = client.send(Request<Void>(method: .post, path: "/items"))
            _ = try await (a, b)
            #expect(stub.requestCount == 2)
        }
    }
}
