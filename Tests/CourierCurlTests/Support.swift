#if canImport(CCurl)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierCurl

/// The local servers `scripts/test` starts (see scripts/servers), for CourierCurl's tests. A
/// missing variable fails the test: a skipped suite would look green without testing anything.
enum CurlServers {
    struct Missing: Error, CustomStringConvertible {
        let variable: String
        var description: String { "\(variable) is not set: run the suite through scripts/test, which starts the servers" }
    }

    static func value(_ variable: String) throws -> String {
        guard let text = ProcessInfo.processInfo.environment[variable], !text.isEmpty else { throw Missing(variable: variable) }
        return text
    }

    static func url(_ variable: String) throws -> URL {
        guard let url = URL(string: try value(variable)) else { throw Missing(variable: variable) }
        return url
    }

    /// The reference API inside a fresh namespace, e.g. `http://127.0.0.1:P/ns/curl-1a2b3c4d`.
    static func namespace() throws -> (URL, String) {
        let name = "curl-\(UUID().uuidString.prefix(8).lowercased())"
        return (try url("COURIER_API_URL").appendingPathComponent("ns").appendingPathComponent(name), name)
    }

    /// `GET /ns/{ns}/_stats` as JSON (read with URLSession, independent of the transport under test).
    static func stats(_ namespace: String) async throws -> [String: Any] {
        let url = try url("COURIER_API_URL").appendingPathComponent("ns").appendingPathComponent(namespace)
            .appendingPathComponent("_stats")
        let (data, _) = try await URLSession.shared.data(from: url)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }

    /// How many requests the server counted for `route` (e.g. `"GET /echo"`) in a namespace.
    static func requestCount(_ namespace: String, _ route: String) async throws -> Int? {
        ((try await stats(namespace)["requests"] as? [String: Any])?[route] as? NSNumber)?.intValue
    }

    /// The `flow` counters of a namespace (TestServer/routes_flow.py).
    static func flow(_ namespace: String) async throws -> (started: Int, completed: Int, disconnects: Int, bytesWritten: Int) {
        let flow = try await stats(namespace)["flow"] as? [String: Any] ?? [:]
        func int(_ key: String) -> Int { (flow[key] as? NSNumber)?.intValue ?? 0 }
        return (int("started"), int("completed"), int("disconnects"), int("bytesWritten"))
    }

    /// Polls `condition` every 10 ms until it holds; fails the test after `limit`. The limit is generous because a loaded CI machine can starve the test's tasks for
    /// seconds; a transfer that hangs still fails it.
    static func waitUntil(
        _ what: String, limit: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: () async throws -> Bool
    ) async throws {
        let clock = ContinuousClock()
        let start = clock.now
        // Bounded by the clock alone: a count of polls ended the wait early when each poll was
        // slow (3000 polls of a loaded server took 30-40 s of a 90 s limit).
        while clock.now - start <= limit {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("timed out waiting until \(what)", sourceLocation: sourceLocation)
        throw CancellationError()
    }
}
#endif
