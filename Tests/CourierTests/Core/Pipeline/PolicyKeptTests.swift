import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting

@Suite("Every EndpointPolicy field is kept by a hand-built pipeline")
struct PolicyKeptTests {
    static func client(_ stub: StubTransport, _ interceptors: [any Interceptor]) -> APIClient {
        APIClient(environment: CoreFixture.environment) {
            $0.transport = stub
            $0.interceptors = interceptors
        }
    }

    @Test("a pipeline without a retry interceptor still retries as the endpoint's policy says")
    func retryIsNeverDropped() async throws {
        let stub = StubTransport(responses: [.status(503), .json(#"{"id":1,"name":"A"}"#)])
        let client = Self.client(stub, [RequestIDInterceptor()])
        let response = try await client.response(
            for: Request<CoreFixture.Item>.get("/items/1", policy: .standard.with(\.retry, RetryPolicy(baseDelay: .zero))))
        #expect(response.value.id == 1)
        #expect(stub.requestCount == 2)
        #expect(response.context.attempt == 2)
    }

    @Test("retries can be turned off for a client, explicitly")
    func retriesOffExplicitly() async throws {
        let stub = StubTransport(responses: [.status(503), .status(200)])
        let client = Self.client(stub, [RetryInterceptor(maximumRetries: 0)])
        let error = await CoreFixture.networkError { try await client.send(Request<Void>.get("/x")) }
        #expect(error?.statusCode == 503)
        #expect(stub.requestCount == 1)
    }

    @Test("the added retry step sits where the standard pipeline has it: outside auth and idempotency keys")
    func addedWhereTheStandardPipelineHasIt() throws {
        let grant = RefreshTokenGrant.oauth2(tokenURL: try #require(URL(string: "http://127.0.0.1:9/auth/refresh")))
        let manager = TokenManager(store: InMemoryTokenStore(), grant: grant)
        let interceptors = ClientLane.withRetries([
            RequestIDInterceptor(), AuthInterceptor(tokenManager: manager), IdempotencyInterceptor(),
        ])
        #expect(
            interceptors.map { "\(type(of: $0))" } == [
                "RequestIDInterceptor", "RetryInterceptor", "AuthInterceptor", "IdempotencyInterceptor",
            ])
        #expect(
            ClientLane.withRetries([LoggingInterceptor(logger: nil)]).map { "\(type(of: $0))" } == [
                "LoggingInterceptor", "RetryInterceptor",
            ])
        let own = ClientLane.withRetries([RetryInterceptor(maximumRetries: 1), RequestIDInterceptor()])
        #expect(own.count == 2)
    }
}
