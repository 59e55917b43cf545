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
    }
}
