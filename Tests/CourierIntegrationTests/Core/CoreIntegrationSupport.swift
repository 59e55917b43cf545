import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier

/// Core integration tests against the reference server and httpbin, grouped by area in extensions.
enum CoreIntegrationTests {}

/// Helpers shared by the core integration tests.
enum CoreLive {
    struct Item: Codable, Equatable, Sendable {
        var id: Int
        var name: String
        var price: Double
        var status: String
        var tags: [String]
        var createdAt: Date
        var updatedAt: Date
    }

    struct ItemPage: Decodable, Sendable {
        var items: [Item]
        var total: Int
        var limit: Int
        var offset: Int
    }

    struct NewItem: Encodable, Sendable {
        var name: String
        var price: Double
        var status: String?
        var tags: [String]?
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

    /// Polls the server's request log until a request to `path` arrived; bounded by 30 s and 3,000
    /// polls (generous: a loaded CI machine can starve the polling task for seconds).
    static func waitUntilServerSaw(_ path: String, namespace: String) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<3000 {
            if try await !TestServers.requestLog(namespace: namespace, path: path).isEmpty { return }
            if clock.now - start > .seconds(30) { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the server never saw \(path) in \(namespace)")
        throw CancellationError()
    }

    /// Seconds in a `Duration`, as a `Double`.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
