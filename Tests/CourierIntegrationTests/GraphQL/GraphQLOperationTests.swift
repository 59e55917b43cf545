import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierGraphQL
import CourierTesting

extension GraphQLIntegrationTests {
    /// Queries, mutations, variables and the error model against the reference server.
    @Suite(.timeLimit(.minutes(1))) struct OperationTests {
        typealias Ops = CatalogOperations

        @Test func queryIsPostedAsJSONWithTheGraphQLAcceptHeader() async throws {
            let (graphQL, namespace) = try TestServers.graphQLClient()
            let result = try await graphQL.response(for: Ops.GetItem(id: "2"))
            #expect(result.data.item == Ops.Item(id: "2", name: "Gadget", price: 24.5))
            #expect(result.errors.isEmpty)
            #expect(result.response.headers["Content-Type"] == "application/graphql-response+json; charset=utf-8")

            let sent = try #require(try await TestServers.requestLog(namespace: namespace, path: "/graphql").first)
            #expect(sent.method == "POST")
            #expect(sent.rawQuery == "")
            #expect(sent.header("Accept") == "application/graphql-response+json, application/json")
            #expect(sent.header("Content-Type") == "application/json")
            let stats = try await GraphQLServerStats.fetch(namespace)
            #expect(
                stats.log == [.init(method: "POST", operationName: "GetItem", kind: "full", status: 200, outcome: "executed")])
            #expect(stats.executions("GetItem") == 1)
        }

        @Test func mutationWithNestedInputIsAppliedOnce() async throws {
            let (graphQL, namespace) = try TestServers.graphQLClient()
            let created = try await graphQL.send(Ops.CreateItem(name: "Desk Lamp")).createItem
            #expect(created.id == "4")
            #expect(created.name == "Desk Lamp")
            #expect(created.details?.color == "amber")
            #expect(created.details?.dimensions?.width == 20)
            #expect(created.details?.dimensions?.unit == "cm")  // the schema's default for the nested input

            let stats = try await GraphQLServerStats.fetch(namespace)
            #expect(stats.int("itemsCreated") == 1)
            #expect(stats.log.map(\.method) == ["POST"])
            // The item is real: the REST API sees it.
            let item: [String: JSONValueForTest] = try await graphQL.client.send(.get("/items/4"))
            #expect(item["name"] == .string("Desk Lamp"))
        }

        @Test func nestedInputVariablesFilterTheResult() async throws {
            let (graphQL, _) = try TestServers.graphQLClient()
            let cheapGifts = try await graphQL.send(Ops.ListItems(filter: .init(tags: ["gifts"], price: .init(max: 30))))
            #expect(cheapGifts.items.map(\.name) == ["Gadget"])
            let none = try await graphQL.send(Ops.ListItems(filter: .init(status: "active", price: .init(min: 100))))
            #expect(none.items.isEmpty)
        }

        /// Errors together with data: `response(for:)` returns both; `send` refuses.
        @Test func partialDataComesWithItsErrors() async throws {
            let (graphQL, _) = try TestServers.graphQLClient()
            let result = try await graphQL.response(for: Ops.ListItems())
            #expect(result.isPartial)
            #expect(result.data.items.map(\.name) == ["Widget", "Gadget", "Old Lamp"])
            #expect(result.data.items.map(\.supplier?.name) == ["Tools Supply Co.", "Electronics Supply Co.", nil])
            let error = try #require(result.errors.first)
            #expect(result.errors.count == 1)
            #expect(error.message == "Supplier of item 3 is unavailable")
            #expect(error.path == [.field("items"), .index(2), .field("supplier")])
            #expect(error.pathDescription == "items[2].supplier")
            #expect(error.code == "SUPPLIER_UNAVAILABLE")
            #expect(error.locations.first?.line == 2)

            do {
                _ = try await graphQL.send(Ops.ListItems())
                Issue.record("send must not hide errors")
            } catch let failure as GraphQLFailure {
                #expect(failure.hasPartialData)
                #expect(failure.codes == ["SUPPLIER_UNAVAILABLE"])
                #expect(failure.statusCode == 200)
            }
        }

        /// A field error that nulls the whole result: a typed error with message, path and code.
        @Test func errorsOnlyIsATypedFailure() async throws {
            let (graphQL, _) = try TestServers.graphQLClient()
            do {
                _ = try await graphQL.response(for: Ops.GetItem(id: "99"))
                Issue.record("expected a GraphQL failure")
            } catch let failure as GraphQLFailure {
                #expect(failure.operationName == "GetItem")
                #expect(failure.statusCode == 200)
                #expect(!failure.hasPartialData)
                #expect(
                    failure.errors == [
                        GraphQLError(
                            message: "Item 99 not found", locations: [.init(line: 2, column: 27)],
                            path: [.field("item")], extensions: ["code": .string("NOT_FOUND")])
                    ])
                #expect(failure.description == "GetItem failed (HTTP 200): Item 99 not found (at item, code NOT_FOUND)")
            }
        }

        /// A validation failure answered 400 with `application/graphql-response+json` is a GraphQL
        /// error, not a bare HTTP 400.
        @Test func requestErrorWith4xxGraphQLMediaTypeIsAGraphQLFailure() async throws {
            let (graphQL, namespace) = try TestServers.graphQLClient()
            do {
                _ = try await graphQL.send(Ops.Invalid())
                Issue.record("expected a GraphQL failure")
            } catch let failure as GraphQLFailure {
                #expect(failure.statusCode == 400)
                #expect(failure.errors.map(\.message) == ["Cannot query field 'serialNumber' on type 'Item'."])
                #expect(failure.errors.first?.path == [])
            }
            let stats = try await GraphQLServerStats.fetch(namespace)
            #expect(stats.log.map(\.outcome) == ["requestError"])
            #expect(stats.log.map(\.status) == [400])
        }

        /// A 404 from something that is not the GraphQL server stays an HTTP error.
        @Test func non2xxWithoutTheGraphQLMediaTypeIsAnHTTPError() async throws {
            let (client, _) = try TestServers.apiClient()
            let graphQL = GraphQLClient(client: client, path: "/no-graphql-here") { _ in }
            do {
                _ = try await graphQL.send(Ops.GetItem(id: "1"))
                Issue.record("expected notFound")
            } catch let error as NetworkError {
                #expect(error.statusCode == 404)
                guard case .notFound = error else {
                    Issue.record("expected notFound, got \(error)")
                    return
                }
            }
        }

        /// A mutation goes out as POST even when the client sends queries as GET.
        @Test func mutationIsNeverSentAsGET() async throws {
            let (graphQL, namespace) = try TestServers.graphQLClient { $0.queryMethod = .get }
            _ = try await graphQL.send(Ops.GetItem(id: "1"))
            _ = try await graphQL.send(Ops.CreateItem(name: "Shade"))
            let stats = try await GraphQLServerStats.fetch(namespace)
            #expect(stats.log.map(\.method) == ["GET", "POST"])
            #expect(stats.log.map(\.outcome) == ["executed", "executed"])
        }
    }
}

/// Any JSON value, for reading REST bodies in these tests.
enum JSONValueForTest: Decodable, Equatable {
    case string(String)
    case number(Double)
    case other

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let number = try? container.decode(Double.self) {
            self = .number(number)
        } else {
            self = .other
        }
    }
}
