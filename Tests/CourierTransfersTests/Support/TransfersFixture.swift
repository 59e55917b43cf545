import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTesting

/// Shared values and helpers for the transfer unit tests.
enum TransfersFixture {
    /// A base URL with a path prefix, so every test also checks that the prefix is kept.
    static let baseURL = URL(string: "https://api.example.test/v1")!
    static let environment = APIEnvironment(name: "transfers-unit", baseURL: baseURL)

    /// A client on `transport` with a request-ID interceptor and retries turned off (so each test
    /// sees exactly one attempt), adjusted by `configure`.
    static func client(
        _ transport: StubTransport, configure: (inout APIClient.Configuration) -> Void = { _ in }
    ) -> APIClient {
        APIClient(environment: environment) { configuration in
            configuration.transport = transport
            configuration.interceptors = [RequestIDInterceptor(), RetryInterceptor(maximumRetries: 0)]
            configure(&configuration)
        }
    }
}
