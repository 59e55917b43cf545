import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierGraphQL
import CourierTesting

/// The GraphQL integration tests against the reference server's `/graphql`, grouped in extensions.
enum GraphQLIntegrationTests {}

/// Operations on the reference server's schema (TestServer/routes_graphql.py).
enum CatalogOperations {
    struct Item: Decodable, Sendable, Hashable {
        var id: String
        var name: String
        var price: Double?
        var supplier: Supplier?
    }

    struct Supplier: Decodable, Sendable, Hashable {
        var name: String
    }

    struct GetItem: GraphQLOperation {
        static let document = """
            # One item by id; a missing id is a NOT_FOUND error and data is null.
            query GetItem($id: ID!) { item(id: $id) { id name price } }
            """
        static let operationName = "GetItem"
        struct ResponseData: Decodable, Sendable { var item: Item }
        struct Variables: Encodable, Sendable, Hashable { var id: String }
        let variables: Variables
        init(id: String) { variables = Variables(id: id) }
    }

    struct ListItems: GraphQLOperation {
        static let document = """
            query ListItems($filter: ItemFilter) {
              items(filter: $filter) { id name price supplier { name } }
            }
            """
        static let operationName = "ListItems"
        struct ResponseData: Decodable, Sendable { var items: [Item] }
        struct Variables: Encodable, Sendable {
            struct PriceRange: Encodable, Sendable {
                var min: Double?
                var max: Double?
            }
            struct Filter: Encodable, Sendable {
                var status: String?
                var tags: [String]?
                var price: PriceRange?
            }
            var filter: Filter?
        }
        let variables: Variables
        init(filter: Variables.Filter? = nil) { variables = Variables(filter: filter) }
    }

    struct CreateItem: GraphQLOperation {
        static let document = """
            mutation CreateItem($input: ItemInput!) {
              createItem(input: $input) { id name price details { color dimensions { width height unit } } }
            }
            """
        static let operationName = "CreateItem"
        struct Created: Decodable, Sendable {
            struct Details: Decodable, Sendable {
                struct Dimensions: Decodable, Sendable {
                    var width: Double
                    var height: Double
                    var unit: String
                }
                var color: String?
                var dimensions: Dimensions?
            }
            var id: String
            var name: String
            var price: Double
            var details: Details?
        }
        struct ResponseData: Decodable, Sendable { var createItem: Created }
        struct Variables: Encodable, Sendable {
            struct Dimensions: Encodable, Sendable {
                var width: Double
                var height: Double
            }
            struct Details: Encodable, Sendable {
                var color: String
                var dimensions: Dimensions
            }
            struct Input: Encodable, Sendable {
                var name: String
                var price: Double
                var tags: [String]
                var details: Details
            }
            var input: Input
        }
        let variables: Variables
        init(name: String) {
            variables = Variables(
                input: .init(
                    name: name, price: 12.5, tags: ["lamps"],
                    details: .init(color: "amber", dimensions: .init(width: 20, height: 35))))
        }
    }

    struct Viewer: GraphQLOperation {
        static let document = "query Viewer { viewer { username tokenId } }"
        static let operationName = "Viewer"
        struct ResponseData: Decodable, Sendable {
            struct Viewer: Decodable, Sendable {
                var username: String
                var tokenId: String
            }
            var viewer: Viewer
        }
    }

    /// Asks for a field the schema does not have: a validation (request) error.
    struct Invalid: GraphQLOperation {
        static let document = "query Invalid { item(id: 1) { id serialNumber } }"
        static let operationName = "Invalid"
        struct ResponseData: Decodable, Sendable {}
    }
}

/// The reference server's GraphQL counters (`graphql` in `GET /_stats`).
struct GraphQLServerStats {
    struct LogEntry: Decodable, Sendable, Equatable {
        var method: String
        var operationName: String?
        var kind: String?
        var status: Int?
        var outcome: String?
    }

    let stats: ServerStats
    let log: [LogEntry]

    static func fetch(_ namespace: String) async throws -> GraphQLServerStats {
        let raw = try await TestServers.stats(namespace: namespace)
        let graphQL = raw["graphql"] as? [String: Any] ?? [:]
        let logData = try JSONSerialization.data(withJSONObject: graphQL["log"] ?? [])
        return GraphQLServerStats(stats: ServerStats(raw), log: try JSONDecoder().decode([LogEntry].self, from: logData))
    }

    func int(_ path: String...) -> Int {
        var value: Any? = stats.raw["graphql"]
        for key in path { value = (value as? [String: Any])?[key] }
        return (value as? Int) ?? 0
    }

    /// Executions of `operation`.
    func executions(_ operation: String) -> Int { int("operations", operation) }
    /// GraphQL requests by method.
    func requests(_ method: String) -> Int { int("requests", method) }
}

extension TestServers {
    /// A GraphQL client on a reference-server client in a fresh namespace.
    static func graphQLClient(
        _ prefix: String = "gql",
        interceptors: [any Interceptor] = [
            RequestIDInterceptor(), RetryInterceptor(clock: TestClock()), IdempotencyInterceptor(),
        ],
        configure: (inout GraphQLClient.Configuration) -> Void = { _ in }
    ) throws -> (GraphQLClient, String) {
        let (client, namespace) = try apiClient(namespace: makeNamespace(prefix)) { $0.interceptors = interceptors }
        return (GraphQLClient(client: client, configure: configure), namespace)
    }

    /// Appends `faults` to the reference server's plan for `method path` in `namespace`.
    static func inject(_ method: String, _ path: String, _ faults: [[String: Any]], namespace: String) async throws {
        let (status, data) = try await control(
            "POST", "_faults", namespace: namespace, json: ["method": method, "path": path, "faults": faults])
        #expect(status == 200, "\(String(decoding: data, as: UTF8.self))")
    }
}
