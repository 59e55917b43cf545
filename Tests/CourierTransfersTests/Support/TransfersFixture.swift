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

    /// How `task` ended — `"cancelled"`, `"returned"` or another error — or a note that it still
    /// ran after `limit` (the task is left behind).
    static func firstOutcome<T: Sendable>(of task: Task<T, any Error>, orAfter limit: Duration) async -> String {
        let (outcomes, report) = AsyncStream.makeStream(of: String.self)
        Task {
            do {
                _ = try await task.value
                report.yield("returned")
            } catch let error as NetworkError where error.isCancellation {
                report.yield("cancelled")
            } catch {
                report.yield("threw \(error)")
            }
        }
        let bound = Task {
            try? await Task.sleep(for: limit)
            report.yield("still waiting \(limit) after the cancellation")
        }
        defer { bound.cancel() }
        var iterator = outcomes.makeAsyncIterator()
        return await iterator.next() ?? "no outcome"
    }
}
