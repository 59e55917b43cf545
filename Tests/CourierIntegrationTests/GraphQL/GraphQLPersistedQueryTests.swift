import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
@testable import CourierGraphQL
import CourierTesting

extension GraphQLIntegrationTests {
    /// Apollo automatic persisted queries against the reference server.
    @Suite(.timeLimit(.minutes(1))) struct PersistedQueryTests {
        typealias Ops = CatalogOperations

        @Test(arguments: [GraphQLQueryMethod.post, .get])
        func missThenHit(_ method: GraphQLQueryMethod) async throws {
            let (graphQL, namespace) = try TestServers.graphQLClient {
                $0.usesPersistedQueries = true
                $0.queryMethod = method
            }
            let first = try await graphQL.send(Ops.GetItem(id: "1"))
            let second = try await graphQL.send(Ops.GetItem(id: "2"))
            #expect(first.item.name == "Widget")
            #expect(second.item.name == "Gadget")

            let stats = try await GraphQLServerStats.fetch(namespace)
            let verb = method == .get ? "GET" : "POST"
            // The server saw the hash alone first, then the document with the hash, then the hash alone.
            #expect(
                stats.log == [
                    .init(
                        method: verb, operationName: "GetItem", kind: "hashOnly", status: 400, outcome: "persistedQueryNotFound"),
                    .init(method: verb, operationName: "GetItem", kind: "fullWithHash", status: 200, outcome: "executed"),
                    .init(method: verb, operationName: "GetItem", kind: "hashOnly", status: 200, outcome: "executed"),
                ])
            #expect(stats.int("apq", "misses") == 1)
            #expect(stats.int("apq", "registered") == 1)
            #expect(stats.int("apq", "hits") == 1)
            #expect(stats.int("apq", "mismatches") == 0)  // the client's SHA-256 is the server's
            #expect(graphQL.documents.hashComputations == 1)
        }

        /// A server answering a miss with 400 and plain `application/json` (Apollo Server 2/3,
        /// graphql-java…): the query is registered once and every later call is a hash-only hit.
        @Test(arguments: [GraphQLQueryMethod.post, .get])
        func missAs400PlainJSONRegistersOnce(_ method: GraphQLQueryMethod) async throws {
            let (graphQL, namespace) = try TestServers.graphQLClient {
                $0.path = "/graphql/apq-400-json"
                $0.usesPersistedQueries = true
                $0.queryMethod = method
            }
            for id in ["1", "2", "1"] { _ = try await graphQL.send(Ops.GetItem(id: id)) }
            let created = try await graphQL.send(Ops.CreateItem(name: "Lamp"))
            #expect(created.createItem.name == "Lamp")

            let stats = try await GraphQLServerStats.fetch(namespace)
            let verb = method == .get ? "GET" : "POST"
            #expect(
                stats.log == [
                    .init(
                        method: verb, operationName: "GetItem", kind: "hashOnly", status: 400, outcome: "persistedQueryNotFound"),
                    .init(method: verb, operationName: "GetItem", kind: "fullWithHash", status: 200, outcome: "executed"),
                    .init(method: verb, operationName: "GetItem", kind: "hashOnly", status: 200, outcome: "executed"),
                    .init(method: verb, operationName: "GetItem", kind: "hashOnly", status: 200, outcome: "executed"),
                    // The mutation is never sent as GET, persisted or not.
                    .init(
                        method: "POST", operationName: "CreateItem", kind: "hashOnly", status: 400,
                        outcome: "persistedQueryNotFound"),
                    .init(method: "POST", operationName: "CreateItem", kind: "fullWithHash", status: 200, outcome: "executed"),
                ])
            #expect(stats.int("apq", "misses") == 2)
            #expect(stats.int("apq", "registered") == 2)
            #expect(stats.int("apq", "hits") == 2)
            #expect(stats.requests("GET") == (method == .get ? 4 : 0))
        }

        /// `PersistedQueryNotSupported` in the 400 plain-JSON form turns APQ off after one try.
        @Test func notSupportedAs400PlainJSONTurnsAPQOff() async throws {
            let (graphQL, namespace) = try TestServers.graphQLClient {
                $0.path = "/graphql/apq-unsupported-400-json"
                $0.usesPersistedQueries = true
            }
            for id in ["1", "2", "3"] { _ = try await graphQL.send(Ops.GetItem(id: id)) }
            let stats = try await GraphQLServerStats.fetch(namespace)
            #expect(stats.int("apq", "unsupported") == 1)
            #expect(stats.log.map(\.kind) == ["hashOnly", "full", "full", "full"])
            #expect(stats.executions("GetItem") == 3)
        }

        /// The hash-only GET of a registered query carries no document in its URL.
        @Test func hashOnlyGETHasNoDocumentInTheURL() async throws {
            let (graphQL, namespace) = try TestServers.graphQLClient {
                $0.usesPersistedQueries = true
                $0.queryMethod = .get
            }
            _ = try await graphQL.send(Ops.GetItem(id: "1"))
            let log = try await TestServers.requestLog(namespace: namespace, path: "/graphql")
            #expect(log.count == 2)
            let hashOnly = try #require(log.first)
            #expect(!hashOnly.rawQuery.contains("query="))
            #expect(hashOnly.rawQuery.contains("sha256Hash"))
            #expect(log.last?.rawQuery.contains("query=") == true)
        }

        /// One operation, one deadline: the document sent after a miss gets what the hash-only
        /// request left of the policy's deadline (it got a whole new one: a 10 s deadline ran 7 s +
        /// 10 s). The client's clock is a manual `TestClock`: the first exchange "takes" 7 s, then
        /// 4 s pass while the server holds the document's request.
        @Test func theRequestAfterAMissGetsWhatIsLeftOfTheDeadline() async throws {
            let clock = TestClock(mode: .manual)
            let spender = DeadlineSpender(clock: clock, firstExchange: .seconds(7))
            let namespace = TestServers.makeNamespace("gql")
            let (client, _) = try TestServers.apiClient(namespace: namespace) {
                $0.clock = clock
                $0.interceptors = [RequestIDInterceptor(), RetryInterceptor(clock: TestClock()), spender]
            }
            let graphQL = GraphQLClient(client: client) {
                $0.usesPersistedQueries = true
                $0.queryPolicy = .standard.with(\.deadline, .seconds(10))
            }
            // The document's request is held at the server while its deadline passes.
            try await TestServers.inject(
                "POST", "/graphql", [["action": "delay", "seconds": 0], ["action": "delay", "seconds": 5]],
                namespace: namespace)
            let call = Task { try await graphQL.send(Ops.GetItem(id: "1")) }
            for _ in 0..<3000 {
                if try await TestServers.requestCount("POST /graphql", namespace: namespace) == 2 { break }
                try await Task.sleep(for: .milliseconds(10))
            }
            clock.advance(by: .seconds(4))
            await #expect(throws: NetworkError.timedOut(nil)) { try await call.value }
            // The hash-only request ran under the whole deadline, the document's under the 3 s left.
            #expect(spender.deadlines == [.seconds(10), .seconds(3)])
            let stats = try await GraphQLServerStats.fetch(namespace)
            #expect(stats.int("apq", "misses") == 1)
            #expect(stats.int("apq", "registered") == 0)  // the document never ran
        }
    }

    /// Records the deadline each request runs under, and moves the client's manual clock by
    /// `firstExchange` once the first request is answered.
    struct DeadlineSpender: Interceptor {
        let clock: TestClock
        let firstExchange: Duration
        private let seen = Locked<[Duration]>([])

        init(clock: TestClock, firstExchange: Duration) {
            self.clock = clock
            self.firstExchange = firstExchange
        }

        var deadlines: [Duration] { seen.current }

        func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
            let count = seen.withLock { seen in
                seen.append(context.policy.deadline)
                return seen.count
            }
            let response = try await next(request)
            if count == 1 { clock.advance(by: firstExchange) }
            return response
        }
    }
}
