import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// The README's production client over a stub transport, shared by suites that check a promise
/// of the README or the doc comments end to end (errors, policy promises, retries, hooks).
enum StandardClientFixture {
    static let environment = APIEnvironment(name: "test", baseURL: URL(string: "https://api.example.test/v1")!)

    /// A token manager signed in with `accessToken`, refreshing through `transport` when given.
    static func signedInManager(accessToken: String = "tok-SECRET-123", transport: (any Transport)? = nil) -> TokenManager {
        TokenManager(
            store: InMemoryTokenStore(AuthTokens(accessToken: accessToken, refreshToken: "refresh-xyz")),
            transport: transport,
            grant: .oauth2(tokenURL: URL(string: "https://auth.example.test/token")!))
    }

    /// The README's production client, with a test clock for the retry layer.
    static func client(
        _ stub: StubTransport,
        tokenManager: TokenManager? = nil,
        cache: HTTPCache? = nil,
        redactor: Redactor = Redactor(),
        retry: RetryInterceptor = RetryInterceptor(clock: TestClock(), random: { 0.5 }),
        validators: [any ResponseValidator] = [],
        configure: (inout APIClient.Configuration) -> Void = { _ in }
    ) -> APIClient {
        APIClient(environment: environment) {
            $0.transport = stub
            $0.interceptors = .standard(tokenManager: tokenManager, cache: cache, redactor: redactor, retry: retry)
            $0.validators = validators
            configure(&$0)
        }
    }

    /// Runs `operation` and returns the `NetworkError` it threw; records an issue otherwise.
    static func networkError<T>(
        sourceLocation: SourceLocation = #_sourceLocation, _ operation: () async throws -> T
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

    static func decodingFailure(_ error: NetworkError?, sourceLocation: SourceLocation = #_sourceLocation) -> DecodingFailure? {
        guard case .decoding(let failure)? = error else {
            Issue.record("expected .decoding, got \(String(describing: error))", sourceLocation: sourceLocation)
            return nil
        }
        return failure
    }
}

/// A gate a stub transport waits on until the test opens it (bounded by the test's time limit).
actor TransportGate {
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func wait() async {
        if isOpen { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    func open() {
        isOpen = true
        for continuation in waiting { continuation.resume() }
        waiting.removeAll()
    }
}

struct Item: Codable, Sendable, Equatable {
    var id: Int
    var name: String
}
