import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierGraphQL
import CourierTesting

/// Persisted queries (APQ) with the caller's own idempotency key: a key never carries two bodies
/// (draft-ietf-httpapi-idempotency-key-header: a server that remembers keys answers 422).
@Suite("Persisted queries and a caller's idempotency key")
struct PersistedQueryKeyTests {
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

    /// A mutation with the caller's key and persisted queries on goes out once, with its
    /// document: no request carries the key with a body other than the one it first carried.
    @Test func aMutationUnderTheCallersKeyCarriesOneBody() async throws {
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
