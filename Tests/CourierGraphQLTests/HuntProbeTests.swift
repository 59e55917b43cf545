import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierGraphQL
import CourierTesting

/// Fault-hunting probes of CourierGraphQL against an independent peer (graphql-core behind a
/// Stripe-style idempotency layer; /tmp/hD-py/gql_peer.py, URL in HUNT_GQL_URL).
private let hasPeer = ProcessInfo.processInfo.environment["HUNT_GQL_URL"] != nil

@Suite("Hunt probes: GraphQL")
struct GraphQLHuntProbeTests {
    struct CreateOrder: GraphQLOperation {
        static let document = "mutation CreateOrder($name: String!) { createOrder(name: $name) { id name } }"
        static let operationName = "CreateOrder"
        struct ResponseData: Decodable, Sendable {
            struct Order: Decodable, Sendable {
                var id: String
                var name: String
            }
            var createOrder: Order
        }
        struct Variables: Encodable, Sendable { var name: String }
        var variables: Variables
        var policy: EndpointPolicy?
    }

    struct PingOp: GraphQLOperation {
        static let document = "query PingOp { ping }"
        static let operationName = "PingOp"
        struct ResponseData: Decodable, Sendable { var ping: String }
    }

    func peer() throws -> URL {
        guard let text = ProcessInfo.processInfo.environment["HUNT_GQL_URL"], let url = URL(string: text) else {
            throw CancellationError()
        }
        return url
    }

    func effects(_ base: URL) async throws -> (effects: Int, mismatch: Int) {
        let (data, _) = try await URLSession.shared.data(from: base.appendingPathComponent("stats"))
        let object = try JSONSerialization.jsonObject(with: data) as? [String: Int] ?? [:]
        return (object["effects"] ?? -1, object["mismatch"] ?? -1)
    }

    /// A mutation with the app's own idempotency key (an order id) through APQ: the hash-only
    /// request misses, the document follows. The server's idempotency layer remembers the key
    /// with the first body: the mutation must still be applied exactly once and succeed.
    @Test(.enabled(if: hasPeer), .timeLimit(.minutes(1))) func huntAPQMutationWithAnAppKeyIsAppliedOnce() async throws {
        let base = try peer()
        let client = APIClient(environment: APIEnvironment(name: "peer", baseURL: base)) { $0.interceptors = .standard() }
        let graphQL = GraphQLClient(client: client) { $0.usesPersistedQueries = true }
        let before = try await effects(base)
        let op = CreateOrder(
            variables: .init(name: "o-\(UUID().uuidString.prefix(6))"),
            policy: EndpointPolicy.standard.with(\.idempotency, .key("order-\(UUID().uuidString)")))
        await #expect(throws: Never.self) { _ = try await graphQL.send(op) }
        let after = try await effects(base)
        #expect(after.effects - before.effects == 1)
        #expect(after.mismatch == before.mismatch, "the key reached the server with two bodies")
    }

    /// A 200 whose body is an HTML maintenance page: a typed decoding error, no crash.
    @Test(.enabled(if: hasPeer), .timeLimit(.minutes(1))) func huntA200HTMLPageIsADecodingError() async throws {
        let base = try peer()
        let client = APIClient(environment: APIEnvironment(name: "peer", baseURL: base)) { $0.interceptors = .standard() }
        let graphQL = GraphQLClient(client: client, path: "/html") { _ in }
        do {
            _ = try await graphQL.send(PingOp())
            Issue.record("an HTML page was accepted")
        } catch let error as NetworkError {
            if case .decoding = error {} else { Issue.record("unexpected \(error)") }
        }
    }

    /// A 200 JSON body without a Content-Type: still read (GraphQL-over-HTTP: legacy servers).
    @Test(.enabled(if: hasPeer), .timeLimit(.minutes(1))) func huntA200WithoutContentTypeIsRead() async throws {
        let base = try peer()
        let client = APIClient(environment: APIEnvironment(name: "peer", baseURL: base)) { $0.interceptors = .standard() }
        let graphQL = GraphQLClient(client: client, path: "/noct") { _ in }
        #expect(try await graphQL.send(PingOp()).ping == "pong")
    }

    /// The same over a stub transport (no peer needed): a mutation with the caller's key and
    /// persisted queries on goes out once, with its document, and a request never carries the
    /// key with a body other than the one it first carried.
    @Test func huntAPQMutationWithAnAppKeyCarriesOneBodyPerKey() async throws {
        let notFound = graphQLResponse(#"{"errors":[{"message":"PersistedQueryNotFound"}]}"#)
        let created = graphQLResponse(#"{"data":{"createOrder":{"id":"1","name":"n"}}}"#)
        // A server that knows no hash: a hash-only request misses, one with the document runs.
        let stub = StubTransport { request in request.jsonBody?["query"] == nil ? notFound : created }
        let graphQL = makeGraphQL(stub, interceptors: [IdempotencyInterceptor(), RetryInterceptor(maximumRetries: 0)]) {
            $0.usesPersistedQueries = true
        }
        let op = CreateOrder(
            variables: .init(name: "n"), policy: EndpointPolicy.standard.with(\.idempotency, .key("order-1")))
        #expect(try await graphQL.send(op).createOrder.id == "1")
        var bodiesByKey: [String: Set<Data>] = [:]
        for request in stub.requests {
            guard let key = request.value(forHTTPHeaderField: "Idempotency-Key") else { continue }
            bodiesByKey[key, default: []].insert(request.httpBody ?? Data())
        }
        #expect(
            bodiesByKey["order-1"]?.count == 1,
            "requests: \(stub.requests.map { String(decoding: $0.httpBody ?? Data(), as: UTF8.self) })")
        #expect(stub.requests.first?.jsonBody?["query"] != nil)
    }
}
