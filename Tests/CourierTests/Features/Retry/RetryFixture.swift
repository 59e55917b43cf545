import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// The retry and idempotency unit tests, grouped in extensions.
enum RetryTests {}

/// Shared helpers for the retry unit tests.
enum RetryFixture {
    static let environment = APIEnvironment(name: "retry-unit", baseURL: URL(string: "https://api.example.test/v1")!)

    /// A client whose pipeline is Retry → Idempotency → `transport`, with the retry layer on `clock`
    /// and a fixed jitter of `random`.
    static func client(
        _ transport: StubTransport,
        clock: TestClock = TestClock(),
        random: Double = 0.5,
        now: Date = Date(timeIntervalSince1970: 1_800_000_000)
    ) -> APIClient {
        APIClient(environment: environment) { configuration in
            configuration.transport = transport
            configuration.interceptors = [
                RetryInterceptor(clock: clock, random: { random }, now: { now }),
                IdempotencyInterceptor(),
            ]
        }
    }

    /// A GET of `/things` with `policy`, returning the raw response.
    static func get(policy: EndpointPolicy = .standard) -> Request<HTTPResponse> {
        Request(method: .get, path: "/things", policy: policy) { response, _ in response }
    }

    /// A request with `method` and `policy`, returning the raw response.
    static func request(_ method: HTTPMethod, policy: EndpointPolicy) -> Request<HTTPResponse> {
        Request(method: method, path: "/things", policy: policy) { response, _ in response }
    }

    static func status(_ code: Int, retryAfter: String? = nil) -> HTTPResponse {
        var headers = HTTPHeaders()
        if let retryAfter { headers.replace("Retry-After", with: retryAfter) }
        return .status(code, headers: headers)
    }

    /// Runs `operation` and returns the `NetworkError` it threw; records an issue otherwise.
    static func networkError<T>(
        sourceLocation: SourceLocation = #_sourceLocation,
        _ operation: () async throws -> T
    ) async -> NetworkError? {
        do {
            let value = try await operation()
            Issue.record("expected a NetworkError, got \(value)", sourceLocation: sourceLocation)
            return nil
        } catch let error as NetworkError {
            return error
        } catch {
            Issue.record("expected a NetworkError, got \(type(of: error)): \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }
}
