import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
@testable import CourierGraphQL
import CourierTesting

/// What goes on the wire (GraphQL-over-HTTP draft, "Request").
@Suite struct TransportTests {
    @Test func postSendsJSONBodyAndAcceptHeader() async throws {
        let stub = StubTransport(responses: [graphQLResponse(#"{"data":{"hero":{"name":"R2-D2"}}}"#)])
        let hero = try await makeGraphQL(stub).send(GetHero()).hero
        #expect(hero.name == "R2-D2")

        let request = try #require(stub.requests.first)
        #expect(request.httpMethod == "POST")
        #expect(request.url?.absoluteString == "https://api.example.com/v1/graphql")
        #expect(request.value(forHTTPHeaderField: "Accept") == "application/graphql-response+json, application/json")
        #expect(request.value(forHTTPHeaderField: "Content-Type") == "application/json")
        let body = try #require(request.httpBody)
        #expect(
            String(decoding: body, as: UTF8.self)
                == ##"{"operationName":"GetHero","query":"# The hero of an episode. A \"query Fake\" in a comment is ignored.\nquery GetHero($episode: String!) { hero(episode: $episode) { name friends } }","variables":{"episode":"JEDI"}}"##
        )
    }

    /// A REST API's snake_case encoder never renames GraphQL's own members or the variables,
    /// whose names are the schema's; its date strategy still applies.
    @Test(arguments: [GraphQLQueryMethod.post, .get])
    func aSnakeCaseClientEncoderLeavesTheEnvelopeAndVariablesAlone(_ method: GraphQLQueryMethod) async throws {
        struct Schedule: GraphQLOperation {
            static let document = "query Schedule($startDate: Date!) { schedule(startDate: $startDate) }"
            static let operationName = "Schedule"
            struct ResponseData: Decodable, Sendable { var schedule: String }
            struct Variables: Encodable, Sendable { var startDate: Date }
            var variables = Variables(startDate: Date(timeIntervalSince1970: 0))
        }
        let stub = StubTransport { _ in graphQLResponse(#"{"data":{"schedule":"ok"}}"#) }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        encoder.dateEncodingStrategy = .iso8601
        let client = APIClient(environment: .graphQLStub) {
            $0.transport = stub
            $0.interceptors = [RequestIDInterceptor(), RetryInterceptor(maximumRetries: 0)]
            $0.encoder = encoder
        }
        let graphQL = GraphQLClient(client: client) {
            $0.usesPersistedQueries = true
            $0.queryMethod = method
        }
        _ = try await graphQL.send(Schedule())
        let request = try #require(stub.requests.first)
        if method == .get {
            #expect(request.queryItem("operationName") == "Schedule")
            #expect(request.queryItem("variables") == #"{"startDate":"1970-01-01T00:00:00Z"}"#)
            #expect(request.queryItem("extensions")?.contains(#""persistedQuery""#) == true)
            #expect(request.queryItem("extensions")?.contains(#""sha256Hash""#) == true)
        } else {
            let body = try #require(request.jsonBody)
            #expect(body["operationName"] as? String == "Schedule", "body keys: \(body.keys.sorted())")
            #expect((body["variables"] as? [String: Any])?["startDate"] as? String == "1970-01-01T00:00:00Z")
            let persisted = (body["extensions"] as? [String: Any])?["persistedQuery"] as? [String: Any]
            #expect(persisted?["sha256Hash"] is String)
        }
    }

    @Test func operationWithoutVariablesSendsNoVariablesMember() async throws {
        let stub = StubTransport(responses: [graphQLResponse(#"{"data":{"ping":"pong"}}"#)])
        #expect(try await makeGraphQL(stub).send(Ping()).ping == "pong")
        let body = try #require(stub.requests.first?.jsonBody)
        #expect(Set(body.keys) == ["query", "operationName"])
    }

    @Test func getPutsParametersInTheQueryString() async throws {
        let stub = StubTransport(responses: [graphQLResponse(#"{"data":{"hero":{"name":"R2-D2"}}}"#)])
        _ = try await makeGraphQL(stub) { $0.queryMethod = .get }.send(GetHero(episode: "A&B=C+D"))
        let request = try #require(stub.requests.first)
        #expect(request.httpMethod == "GET")
        #expect(request.httpBody == nil)
        #expect(request.queryItem("operationName") == "GetHero")
        #expect(request.queryItem("query") == GetHero.document)
        #expect(request.queryItem("variables") == #"{"episode":"A&B=C+D"}"#)
        #expect(request.queryItem("extensions") == nil)
        // `+` and `&` inside the JSON are percent-encoded, never read as a space or a separator.
        #expect(request.url?.query?.contains("%2B") == true)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)
    }

    @Test func operationCanAskForGETWhileTheClientPosts() async throws {
        struct CachedPing: GraphQLOperation {
            static let document = Ping.document
            static let operationName = "Ping"
            struct ResponseData: Decodable, Sendable { var ping: String }
            var queryMethod: GraphQLQueryMethod? { .get }
        }
        let stub = StubTransport(responses: [graphQLResponse(#"{"data":{"ping":"pong"}}"#)])
        _ = try await makeGraphQL(stub).send(CachedPing())
        #expect(stub.requests.first?.httpMethod == "GET")
    }

    @Test func mutationIsPostedEvenWhenQueriesUseGET() async throws {
        let stub = StubTransport(responses: [graphQLResponse(#"{"data":{"renameHero":{"name":"Luke"}}}"#)])
        _ = try await makeGraphQL(stub) { $0.queryMethod = .get }.send(RenameHero())
        #expect(stub.requests.first?.httpMethod == "POST")
    }

    @Test func unknownOperationNameFailsWithoutSending() async throws {
        struct Misnamed: GraphQLOperation {
            static let document = "query GetHero { hero { name } }"
            static let operationName = "GetHeroes"
            struct ResponseData: Decodable, Sendable {}
        }
        struct Subscribe: GraphQLOperation {
            static let document = "subscription OnReview { review { stars } }"
            static let operationName = "OnReview"
            struct ResponseData: Decodable, Sendable {}
        }
        let stub = StubTransport(responses: [HTTPResponse]())
        let graphQL = makeGraphQL(stub)
        let misnamed = await #expect(throws: NetworkError.self) { try await graphQL.send(Misnamed()) }
        #expect(misnamed?.invalidRequestReason == "the GraphQL document defines no operation named GetHeroes")
        let subscription = await #expect(throws: NetworkError.self) { try await graphQL.send(Subscribe()) }
        #expect(subscription?.invalidRequestReason == "OnReview is a subscription, which needs a streaming transport")
        #expect(stub.requestCount == 0)
    }

    @Test func pathTemplateNamesTheOperation() async throws {
        let stub = StubTransport(responses: [graphQLResponse(#"{"data":{"renameHero":{"name":"Luke"}}}"#)])
        let metrics = CapturingMetricsSink()
        let graphQL = makeGraphQL(stub, interceptors: [MetricsInterceptor(sink: metrics)]) { $0.path = "/api/graphql" }
        _ = try await graphQL.send(RenameHero())
        #expect(metrics.events.map(\.pathTemplate) == ["/api/graphql mutation RenameHero"])
        #expect(metrics.events.map(\.method) == [.post])
    }
}

extension NetworkError {
    /// The reason of an ``NetworkError/invalidRequest(_:)``.
    var invalidRequestReason: String? {
        if case .invalidRequest(let reason) = self { return reason }
        return nil
    }
}
