import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierGraphQL

/// The GraphQL chapter: the same client pipeline (cache, retries, auth refresh, logging) carries
/// GraphQL operations to the reference server's `/graphql` — partial data with its errors, a
/// cached GET query, automatic persisted queries, an idempotent mutation surviving a dropped
/// connection, and `UNAUTHENTICATED` mapped to the token refresh.
func runGraphQLChapter(_ demo: Demo) async throws {
    demo.chapter("GraphQL: one endpoint, the same pipeline")
    let server = GraphQLDemoServer(demo: demo)
    let transport = URLSessionTransport()
    let tokens = TokenManager(
        store: InMemoryTokenStore(), transport: transport,
        grant: .oauth2(tokenURL: demo.environment.baseURL.appendingPathComponent("auth/refresh")))
    let client = demo.makeClient {
        $0.transport = transport
        $0.interceptors = .standard(tokenManager: tokens, cache: HTTPCache())
    }
    let graphQL = GraphQLClient(client: client) {
        $0.queryMethod = .get  // queries as cacheable GETs
        $0.usesPersistedQueries = true  // Apollo APQ: hash first
    }

    // Partial data: the caller gets the items and the error that nulled one supplier.
    let list = try await graphQL.response(for: GraphQLDemo.ListItems())
    let suppliers = list.data.items.map { "\($0.name): \($0.supplier?.name ?? "—")" }.joined(separator: ", ")
    demo.say("ListItems → \(suppliers)")
    for error in list.errors { demo.say("  with error: \(error)") }

    // APQ: the first GetItem sends the hash, learns the server lacks it, and sends the document
    // once; the second sends only the hash (a short, cacheable URL). A complete result is
    // cacheable, so the third is answered by the HTTP cache without a request.
    var outcomes: [String] = []
    for _ in 0..<3 { outcomes.append(outcome(try await graphQL.response(for: GraphQLDemo.GetItem(id: "1")))) }
    let apq = try await server.stats().graphql.apq
    demo.say(
        "GetItem(1) × 3 → cache \(outcomes.joined(separator: ", ")); APQ on the server: "
            + "\(apq.misses) misses, \(apq.registered) registered, \(apq.hits) hits")

    // Errors only: a typed failure with every message, path and code.
    do {
        _ = try await graphQL.send(GraphQLDemo.GetItem(id: "99"))
    } catch let failure as GraphQLFailure {
        demo.say("GetItem(99) → \(failure)")
    }

    // Sign in, then the server revokes the token: its UNAUTHENTICATED starts one refresh.
    try await server.post("auth/config", ["refreshFails": NSNull(), "refreshDelay": 0])  // the session chapter's ending
    try await demo.signIn(through: client, into: tokens)
    try await server.post("auth/revoke", [:])
    let before = try await server.stats()
    let authorized = GraphQLClient(client: client) { $0.queryPolicy = .authorizedRead }
    let viewer = try await authorized.send(GraphQLDemo.Viewer()).viewer
    let stats = try await server.stats()
    demo.say(
        "token revoked; Viewer → \(viewer.username) after \(stats.refreshCalls - before.refreshCalls) refresh "
            + "(server sent UNAUTHENTICATED \(stats.graphql.unauthenticated - before.graphql.unauthenticated)×)")

    // A mutation whose response is lost: retried with the same Idempotency-Key, applied once.
    // (A fresh connection pool: libcurl would silently re-send a POST on a pooled connection the
    // server drops — see TestServer/README.md, "Connections while drops are pending".)
    try await server.post("_faults", ["method": "POST", "path": "/graphql", "faults": [["action": "drop_after_store"]]])
    let writer = GraphQLClient(
        client: demo.makeClient {
            $0.transport = URLSessionTransport()
            $0.interceptors = .standard(tokenManager: tokens)
        }
    ) { $0.mutationPolicy = .authorizedWrite }
    let created = try await writer.response(for: GraphQLDemo.CreateItem(name: "Desk Lamp"))
    let after = try await server.stats()
    demo.say(
        "CreateItem → #\(created.data.createItem.id) \(created.data.createItem.name) after \(created.context.attempt) attempts; "
            + "server applied it \(after.graphql.itemsCreated)× and replayed \(after.graphql.replays)×")
    demo.say("logs, metrics and the HAR file name each call \"/graphql query ListItems\", not \"/graphql\"")
}

private func outcome<Value>(_ result: GraphQLResult<Value>) -> String {
    result.context.cacheOutcome.map { "\($0)" } ?? "-"
}

private enum GraphQLDemo {
    struct Item: Decodable, Sendable {
        struct Supplier: Decodable, Sendable { var name: String }
        var id: String
        var name: String
        var supplier: Supplier?
    }

    struct ListItems: GraphQLOperation {
        static let document = "query ListItems { items { id name supplier { name } } }"
        static let operationName = "ListItems"
        struct ResponseData: Decodable, Sendable { var items: [Item] }
    }

    struct GetItem: GraphQLOperation {
        static let document = "query GetItem($id: ID!) { item(id: $id) { id name } }"
        static let operationName = "GetItem"
        struct ResponseData: Decodable, Sendable { var item: Item }
        struct Variables: Encodable, Sendable { var id: String }
        let variables: Variables
        init(id: String) { variables = Variables(id: id) }
    }

    struct Viewer: GraphQLOperation {
        static let document = "query Viewer { viewer { username } }"
        static let operationName = "Viewer"
        struct ResponseData: Decodable, Sendable {
            struct Viewer: Decodable, Sendable { var username: String }
            var viewer: Viewer
        }
    }

    struct CreateItem: GraphQLOperation {
        static let document = "mutation CreateItem($input: ItemInput!) { createItem(input: $input) { id name } }"
        static let operationName = "CreateItem"
        struct ResponseData: Decodable, Sendable { var createItem: Item }
        struct Variables: Encodable, Sendable {
            struct Input: Encodable, Sendable {
                var name: String
                var price: Double
            }
            var input: Input
        }
        let variables: Variables
        init(name: String) { variables = Variables(input: .init(name: name, price: 19.9)) }
    }
}

/// The reference server's control routes, outside the client under demonstration.
private struct GraphQLDemoServer {
    let demo: Demo

    struct Stats: Decodable {
        struct GraphQL: Decodable {
            struct APQ: Decodable {
                var misses: Int
                var registered: Int
                var hits: Int
            }
            var apq: APQ
            var unauthenticated: Int
            var itemsCreated: Int
            var replays: Int
        }
        var refreshCalls: Int
        var graphql: GraphQL
    }

    func post(_ path: String, _ json: [String: Any]) async throws { try await demo.controlPOST(path, json) }

    func stats() async throws -> Stats { try await demo.serverStats() }
}
