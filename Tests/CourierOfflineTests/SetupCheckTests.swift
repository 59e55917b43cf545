import Foundation
import Testing
import Courier
import CourierTesting
@testable import CourierOffline

@Suite("A queue refuses, at setup, a client that would send mutations without their token or key")
struct SetupCheckTests {
    static func client(_ interceptors: [any Interceptor]) throws -> APIClient {
        let environment = try APIEnvironment(name: "prod", baseURL: "https://api.example.test")
        return APIClient(environment: environment) {
            $0.transport = StubTransport { _ in .status(204) }
            $0.interceptors = interceptors
        }
    }

    @Test("a kind that requires auth on a pipeline without an AuthInterceptor is refused before anything is stored")
    func authRequired() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        var configuration = MutationQueue.Configuration()
        configuration.kinds["note"] = MutationQueue.KindPolicy(policy: .authorizedWrite)
        #expect {
            try MutationQueue(path: dir.path("q.sqlite"), client: try Self.client(.standard()), configuration: configuration)
        } throws: { error in
            guard case NetworkError.missingInterceptor(let reason) = error else { return false }
            return reason.contains("AuthInterceptor")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.path("q.sqlite")))
    }

    @Test("a pipeline without an IdempotencyInterceptor is refused: every mutation carries its key")
    func idempotencyKey() throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        #expect {
            try MutationQueue(path: dir.path("q.sqlite"), client: try Self.client([RequestIDInterceptor()]))
        } throws: { error in
            guard case NetworkError.missingInterceptor(let reason) = error else { return false }
            return reason.contains("IdempotencyInterceptor")
        }
        _ = try MutationQueue(path: dir.path("ok.sqlite"), client: try Self.client(.standard()))
    }
}
