import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
@testable import CourierGraphQL
import CourierTesting

/// Retries, de-duplication and persisted queries through the pipeline, against a stub.
@Suite(.timeLimit(.minutes(1))) struct PipelineTests {
    static let hero = #"{"data":{"hero":{"name":"R2-D2"}}}"#

    @Test func postQueryIsRetriedLikeAGET() async throws {
        let stub = StubTransport(responses: [.status(503), graphQLResponse(Self.hero)])
        let clock = TestClock()
        let graphQL = makeGraphQL(stub, interceptors: [RetryInterceptor(clock: clock, random: { 0.5 })])
        let result = try await graphQL.response(for: GetHero())
        #expect(result.data.hero.name == "R2-D2")
        #expect(result.context.attempt == 2)
        #expect(stub.requests.map(\.httpMethod) == ["POST", "POST"])
        #expect(clock.sleeps.count == 1)
    }

    @Test func mutationWithoutKeyIsNotRetried() async throws {
        let stub = StubTransport(responses: [.status(503), graphQLResponse(#"{"data":{"renameHero":{"name":"Luke"}}}"#)])
        let graphQL = makeGraphQL(stub, interceptors: [RetryInterceptor(clock: TestClock()), IdempotencyInterceptor()])
        let error = await #expect(throws: NetworkError.self) { try await graphQL.send(RenameHero()) }
        #expect(error?.statusCode == 503)
        #expect(stub.requestCount == 1)
    }

    @Test func mutationWithKeyIsRetriedWithTheSameKey() async throws {
        let stub = StubTransport(responses: [.status(503), graphQLResponse(#"{"data":{"renameHero":{"name":"Luke"}}}"#)])
        let graphQL = makeGraphQL(stub, interceptors: [RetryInterceptor(clock: TestClock()), IdempotencyInterceptor()]) {
            $0.mutationPolicy = EndpointPolicy.standard.with(\.idempotency, .key("rename-1"))
        }
        #expect(try await graphQL.send(RenameHero()).renameHero.name == "Luke")
        #expect(stub.requests.map { $0.value(forHTTPHeaderField: "Idempotency-Key") } == ["rename-1", "rename-1"])
    }

    /// Identical concurrent POST queries share one request; a mutation never does.
    @Test func identicalConcurrentQueriesShareOneRequest() async throws {
        let release = AsyncGate()
        let stub = StubTransport { _ in
            await release.wait()
            return graphQLResponse(Self.hero)
        }
        let dedup = DeduplicationInterceptor()
        let graphQL = makeGraphQL(stub, interceptors: [RequestIDInterceptor(), dedup])
        async let first = graphQL.response(for: GetHero())
        async let second = graphQL.response(for: GetHero())
        async let third = graphQL.response(for: GetHero())
        async let other = graphQL.response(for: GetHero(episode: "EMPIRE"))
        // Bounded wait until all four calls are in the interceptor (no sleeping on time).
        for _ in 0..<10_000 where dedup.waitingCount < 4 { await Task.yield() }
        #expect(dedup.waitingCount == 4)
        #expect(dedup.inFlightCount == 2)
        release.open()
        let results = try await [first, second, third, other]
        #expect(stub.requestCount == 2)
        let roles = results.map { $0.context[DeduplicationRoleKey.self] }
        #expect(roles.filter { $0 == .joined }.count == 2)

        let mutations = StubTransport { _ in graphQLResponse(#"{"data":{"renameHero":{"name":"Luke"}}}"#) }
        let writer = makeGraphQL(mutations, interceptors: [DeduplicationInterceptor()])
        async let a = writer.send(RenameHero())
        async let b = writer.send(RenameHero())
        _ = try await (a, b)
        #expect(mutations.requestCount == 2)
    }

    @Test func persistedQueryMissResendsTheDocumentOnceThenHits() async throws {
        let notFound = graphQLResponse(
            #"{"errors":[{"message":"PersistedQueryNotFound","extensions":{"code":"PERSISTED_QUERY_NOT_FOUND"}}]}"#, status: 400)
        let stub = StubTransport(responses: [notFound, graphQLResponse(Self.hero), graphQLResponse(Self.hero)])
        let graphQL = makeGraphQL(stub) { $0.usesPersistedQueries = true }
        _ = try await graphQL.send(GetHero())
        _ = try await graphQL.send(GetHero())

        let hash = graphQL.documents.sha256Hash(of: GetHero.document)
        #expect(hash.count == 64)
        let bodies = stub.requests.compactMap(\.jsonBody)
        #expect(bodies.map { $0["query"] != nil } == [false, true, false])
        for body in bodies {
            let persisted = (body["extensions"] as? [String: Any])?["persistedQuery"] as? [String: Any]
            #expect(persisted?["sha256Hash"] as? String == hash)
            #expect(persisted?["version"] as? Int == 1)
        }
        #expect(graphQL.documents.hashComputations == 1)
    }

    @Test func persistedQueryMissIsResentOnlyOnce() async throws {
        let notFound = graphQLResponse(#"{"errors":[{"message":"PersistedQueryNotFound"}]}"#)
        let stub = StubTransport(responses: [notFound, notFound, graphQLResponse(Self.hero)])
        let graphQL = makeGraphQL(stub) { $0.usesPersistedQueries = true }
        let failure = await #expect(throws: GraphQLFailure.self) { try await graphQL.send(GetHero()) }
        #expect(failure?.errors.map(\.message) == ["PersistedQueryNotFound"])
        #expect(stub.requestCount == 2)
    }

    /// Apollo Server 2/3, graphql-java and others answer an APQ miss with 400 and plain
    /// `application/json` (not the GraphQL media type): still a miss, registered once.
    @Test(arguments: ["application/json", "application/json; charset=utf-8", "application/problem+json"])
    func persistedQueryMissAs400PlainJSONIsStillAMiss(_ contentType: String) async throws {
        let notFound = HTTPResponse.json(
            #"{"errors":[{"message":"PersistedQueryNotFound","extensions":{"code":"PERSISTED_QUERY_NOT_FOUND"}}]}"#,
            status: 400, headers: ["Content-Type": contentType])
        let stub = StubTransport(responses: [notFound, graphQLResponse(Self.hero), graphQLResponse(Self.hero)])
        let graphQL = makeGraphQL(stub) { $0.usesPersistedQueries = true }
        #expect(try await graphQL.send(GetHero()).hero.name == "R2-D2")
        #expect(try await graphQL.send(GetHero()).hero.name == "R2-D2")
        #expect(stub.requests.compactMap(\.jsonBody).map { $0["query"] != nil } == [false, true, false])
    }

    /// Only the APQ answers are read from a plain-JSON 4xx: any other error there stays an HTTP
    /// failure (it may be a proxy's), and a request without a hash never reads one.
    @Test func other400PlainJSONErrorsStayHTTPFailures() async throws {
        let other = HTTPResponse.json(
            #"{"errors":[{"message":"Bad things"}]}"#, status: 400, headers: ["Content-Type": "application/json"])
        let stub = StubTransport(responses: [other])
        let graphQL = makeGraphQL(stub) { $0.usesPersistedQueries = true }
        let error = await #expect(throws: NetworkError.self) { try await graphQL.send(GetHero()) }
        #expect(error?.statusCode == 400)
        #expect(stub.requestCount == 1)

        let notFound = HTTPResponse.json(
            #"{"errors":[{"message":"PersistedQueryNotFound"}]}"#, status: 400, headers: ["Content-Type": "application/json"])
        let plain = StubTransport(responses: [notFound])
        let withoutAPQ = makeGraphQL(plain)
        let plainError = await #expect(throws: NetworkError.self) { try await withoutAPQ.send(GetHero()) }
        #expect(plainError?.statusCode == 400)
    }

    /// A plain-JSON 400 `PersistedQueryNotSupported` turns APQ off like the other forms.
    @Test func persistedQueryNotSupportedAs400PlainJSONTurnsThemOff() async throws {
        let unsupported = HTTPResponse.json(
            #"{"errors":[{"message":"PersistedQueryNotSupported"}]}"#, status: 400,
            headers: ["Content-Type": "application/json"])
        let stub = StubTransport(responses: [unsupported, graphQLResponse(Self.hero), graphQLResponse(Self.hero)])
        let graphQL = makeGraphQL(stub) { $0.usesPersistedQueries = true }
        _ = try await graphQL.send(GetHero())
        _ = try await graphQL.send(GetHero())
        #expect(stub.requests.compactMap(\.jsonBody).map { $0["extensions"] != nil } == [true, false, false])
    }

    /// With APQ on and queries over GET, a mutation still goes out as POST (hash and document).
    @Test func persistedMutationStaysOffGET() async throws {
        let notFound = HTTPResponse.json(
            #"{"errors":[{"message":"PersistedQueryNotFound"}]}"#, status: 400, headers: ["Content-Type": "application/json"])
        let renamed = graphQLResponse(#"{"data":{"renameHero":{"name":"Luke"}}}"#)
        let stub = StubTransport(responses: [notFound, renamed])
        let graphQL = makeGraphQL(stub) {
            $0.usesPersistedQueries = true
            $0.queryMethod = .get
        }
        #expect(try await graphQL.send(RenameHero()).renameHero.name == "Luke")
        #expect(stub.requests.map(\.httpMethod) == ["POST", "POST"])
    }

    @Test func serverWithoutPersistedQueriesTurnsThemOff() async throws {
        let unsupported = graphQLResponse(
            #"{"errors":[{"message":"PersistedQueryNotSupported","extensions":{"code":"PERSISTED_QUERY_NOT_SUPPORTED"}}]}"#,
            status: 400)
        let stub = StubTransport(responses: [unsupported, graphQLResponse(Self.hero), graphQLResponse(Self.hero)])
        let graphQL = makeGraphQL(stub) { $0.usesPersistedQueries = true }
        _ = try await graphQL.send(GetHero())
        _ = try await graphQL.send(GetHero())
        let bodies = stub.requests.compactMap(\.jsonBody)
        #expect(bodies.map { $0["query"] != nil } == [false, true, true])
        #expect(bodies.map { $0["extensions"] != nil } == [true, false, false])
    }
}

/// A one-shot gate: `wait()` suspends until `open()`.
final class AsyncGate: Sendable {
    private let state = LockedBox<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

/// A tiny lock box for the tests (Courier's `Locked` is package-internal to its modules).
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func withLock<R>(_ body: (inout Value) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
