import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
@testable import CourierGraphQL
import CourierTesting

struct CreateOrderAndNotify: GraphQLOperation {
    static let document = "mutation CreateOrderAndNotify { createOrder { id } notify }"
    static let operationName = "CreateOrderAndNotify"
    struct Order: Decodable, Sendable { var id: String }
    struct ResponseData: Decodable, Sendable {
        var createOrder: Order?
        var notify: Bool?
    }
}

/// An operation never goes where it was not started, and a mutation that may have run is never
/// sent again for a token.
@Suite(.timeLimit(.minutes(1))) struct MisrouteAndResendTests {
    static func tokens(_ stub: StubTransport) -> TokenManager {
        TokenManager(
            store: InMemoryTokenStore(AuthTokens(accessToken: "old", refreshToken: "r")), transport: stub,
            grant: .oauth2(tokenURL: URL(string: "https://api.example.com/token")!))
    }

    static func graphQL(_ stub: StubTransport, tokens: TokenManager) -> GraphQLClient {
        makeGraphQL(
            stub,
            interceptors: [RequestIDInterceptor(), RetryInterceptor(maximumRetries: 0), AuthInterceptor(tokenManager: tokens)]
        ) { $0.mutationPolicy = EndpointPolicy.standard.with(\.auth, .required) }
    }

    @Test func aMutationThatRanInPartIsNotSentAgainForAnUnauthenticatedField() async throws {
        // createOrder ran; notify failed UNAUTHENTICATED (a downstream token): data is present.
        let partial = graphQLResponse(
            #"{"data":{"createOrder":{"id":"o1"},"notify":null},"errors":[{"message":"no","path":["notify"],"#
                + #""extensions":{"code":"UNAUTHENTICATED"}}]}"#)
        let stub = StubTransport { request in
            if request.url?.path == "/token" { return .json(#"{"access_token":"new","expires_in":3600}"#) }
            return partial
        }
        _ = try? await Self.graphQL(stub, tokens: Self.tokens(stub)).response(for: CreateOrderAndNotify())
        #expect(stub.requests.filter { $0.url?.path == "/v1/graphql" }.count == 1)
        #expect(!stub.requests.contains { $0.url?.path == "/token" })
    }

    @Test func aMutationRefusedBeforeItRanIsSentAgainWithANewToken() async throws {
        // A request error (no `data`): nothing ran, one refresh and one resend are safe.
        let refused = graphQLResponse(#"{"errors":[{"message":"no","extensions":{"code":"UNAUTHENTICATED"}}]}"#)
        let done = graphQLResponse(#"{"data":{"createOrder":{"id":"o1"},"notify":true}}"#)
        let stub = StubTransport { request in
            if request.url?.path == "/token" { return .json(#"{"access_token":"new","expires_in":3600}"#) }
            return request.value(forHTTPHeaderField: "Authorization") == "Bearer new" ? done : refused
        }
        let result = try await Self.graphQL(stub, tokens: Self.tokens(stub)).response(for: CreateOrderAndNotify())
        #expect(result.data.createOrder?.id == "o1")
        #expect(stub.requests.filter { $0.url?.path == "/v1/graphql" }.count == 2)
    }

    @Test func anOddlyShapedErrorEntryDoesNotHideUnauthenticated() async throws {
        let refused = graphQLResponse(
            #"{"errors":["plain text",{"extensions":7},{"extensions":{"code":42}},"#
                + #"{"message":"no","extensions":{"code":"UNAUTHENTICATED"}}]}"#)
        let done = graphQLResponse(#"{"data":{"ping":"pong"}}"#)
        let stub = StubTransport { request in
            if request.url?.path == "/token" { return .json(#"{"access_token":"new","expires_in":3600}"#) }
            return request.value(forHTTPHeaderField: "Authorization") == "Bearer new" ? done : refused
        }
        let graphQL = makeGraphQL(
            stub, interceptors: [RetryInterceptor(maximumRetries: 0), AuthInterceptor(tokenManager: Self.tokens(stub))]
        ) { $0.queryPolicy = EndpointPolicy.standard.with(\.auth, .required) }
        _ = try? await graphQL.send(Ping())
        #expect(stub.requests.contains { $0.url?.path == "/token" })
    }

    @Test func thePersistedQueryFallbackGoesOnlyWhereTheFirstRequestWent() async throws {
        let production = APIEnvironment(name: "production", baseURL: URL(string: "https://prod.example.com/v1")!)
        let clientBox = LockedBox<APIClient?>(nil)
        let stub = StubTransport { request in
            if request.url?.host == "api.example.com" {
                // A debug-menu switch lands while the hash-only request is answered.
                try await clientBox.withLock { $0 }?.switchEnvironment(to: production)
                return graphQLResponse(#"{"errors":[{"message":"PersistedQueryNotFound"}]}"#)
            }
            return graphQLResponse(#"{"data":{"renameHero":{"name":"Luke"}}}"#)
        }
        let graphQL = makeGraphQL(stub) { $0.usesPersistedQueries = true }
        clientBox.withLock { $0 = graphQL.client }
        await #expect(throws: (any Error).self) { try await graphQL.send(RenameHero()) }
        #expect(stub.requests.compactMap { $0.url?.host } == ["api.example.com"])
    }
}
