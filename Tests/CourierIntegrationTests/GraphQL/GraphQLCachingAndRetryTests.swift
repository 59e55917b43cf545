import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierGraphQL
import CourierTesting

extension GraphQLIntegrationTests {
    /// The HTTP cache, retries and idempotency keys applied to GraphQL calls.
    @Suite(.timeLimit(.minutes(1))) struct CachingAndRetryTests {
        typealias Ops = CatalogOperations

        @Test func getQueryIsServedByTheHTTPCache() async throws {
            let (graphQL, namespace) = try TestServers.graphQLClient(
                interceptors: .standard(cache: HTTPCache(), retry: RetryInterceptor(clock: TestClock()))
            ) { $0.queryMethod = .get }
            let first = try await graphQL.response(for: Ops.GetItem(id: "1"))
            let second = try await graphQL.response(for: Ops.GetItem(id: "1"))
            let other = try await graphQL.response(for: Ops.GetItem(id: "2"))
            #expect(first.response.headers["Cache-Control"] == "public, max-age=60")
            #expect(first.context.cacheOutcome == .miss)
            #expect(second.context.cacheOutcome == .hit)
            #expect(second.data.item.name == "Widget")
            #expect(other.context.cacheOutcome == .miss)  // other variables, other URL
            let stats = try await GraphQLServerStats.fetch(namespace)
            #expect(stats.requests("GET") == 2)
            #expect(stats.executions("GetItem") == 2)
        }

        @Test func postQueryIsNotCached() async throws {
            let (graphQL, namespace) = try TestServers.graphQLClient(
                interceptors: .standard(cache: HTTPCache(), retry: RetryInterceptor(clock: TestClock())))
            _ = try await graphQL.send(Ops.GetItem(id: "1"))
            _ = try await graphQL.send(Ops.GetItem(id: "1"))
            let stats = try await GraphQLServerStats.fetch(namespace)
            #expect(stats.requests("POST") == 2)
        }

        /// The server applies the mutation and drops the connection; the retry carries the same
        /// key and gets the stored outcome: one item.
        @Test func keyedMutationIsRetriedOnceAfterADroppedConnectionAndAppliedOnce() async throws {
            let clock = TestClock()
            let (graphQL, namespace) = try TestServers.graphQLClient(
                interceptors: [RequestIDInterceptor(), RetryInterceptor(clock: clock, random: { 0.5 }), IdempotencyInterceptor()]
            ) { $0.mutationPolicy = EndpointPolicy.standard.with(\.idempotency, .automatic) }
            try await TestServers.inject("POST", "/graphql", [["action": "drop_after_store"]], namespace: namespace)

            let result = try await graphQL.response(for: Ops.CreateItem(name: "Floor Lamp"))
            let key = try #require(result.context.idempotencyKey)
            #expect(result.data.createItem.name == "Floor Lamp")
            #expect(result.context.attempt == 2)
            #expect(result.response.headers["Idempotent-Replayed"] == "true")
            #expect(clock.sleeps.count == 1)

            let stats = try await GraphQLServerStats.fetch(namespace)
            #expect(stats.int("itemsCreated") == 1)
            #expect(stats.int("createdByKey", key) == 1)
            #expect(stats.int("replays") == 1)
            #expect(stats.requests("POST") == 2)
            let keys = try await TestServers.requestLog(namespace: namespace, path: "/graphql").map {
                $0.header("Idempotency-Key")
            }
            #expect(keys == [key, key])
        }

        /// Without a key the mutation is sent once: the caller gets the transport error.
        @Test func mutationWithoutKeyIsNotRetried() async throws {
            let clock = TestClock()
            let (graphQL, namespace) = try TestServers.graphQLClient(
                interceptors: [RequestIDInterceptor(), RetryInterceptor(clock: clock), IdempotencyInterceptor()])
            try await TestServers.inject("POST", "/graphql", [["action": "drop_after_store"]], namespace: namespace)
            do {
                _ = try await graphQL.send(Ops.CreateItem(name: "Wall Lamp"))
                Issue.record("expected a transport error")
            } catch let error as NetworkError {
                guard case .transport = error else {
                    Issue.record("expected transport, got \(error)")
                    return
                }
            }
            let stats = try await GraphQLServerStats.fetch(namespace)
            #expect(stats.int("itemsCreated") == 1)
            #expect(stats.requests("POST") == 1)
            #expect(clock.sleeps.isEmpty)
        }

        /// A query is read-only, so its POST is retried like a GET after a dropped connection.
        @Test func postQueryIsRetriedAfterADroppedConnection() async throws {
            let clock = TestClock()
            let (graphQL, namespace) = try TestServers.graphQLClient(
                interceptors: [RequestIDInterceptor(), RetryInterceptor(clock: clock), IdempotencyInterceptor()])
            try await TestServers.inject("POST", "/graphql", [["action": "drop"]], namespace: namespace)
            let result = try await graphQL.response(for: Ops.GetItem(id: "3"))
            #expect(result.data.item.name == "Old Lamp")
            #expect(result.context.attempt == 2)
            #expect(result.context.idempotencyKey == nil)
            let stats = try await GraphQLServerStats.fetch(namespace)
            #expect(stats.stats.requests("POST /graphql") == 2)  // the dropped one never reached the handler
            #expect(stats.executions("GetItem") == 1)
        }
    }
}
