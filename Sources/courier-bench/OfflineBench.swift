import Foundation
import Courier
import CourierOffline

/// Offline queue: how many mutations per second `enqueue` commits durably (SQLite WAL,
/// `synchronous=FULL`: one fsync per mutation), and how fast a flush drains them to the
/// reference server compared with sending the same requests directly through the same client —
/// one ordering group against sequential calls, and 8 groups against 8 concurrent callers.
///
/// - Throws: When a mutation is not delivered or the server did not apply every one exactly once.
func runOfflineBench(serverURL: URL, mutations: Int = 1000) async throws {
    print("\noffline queue: \(mutations) mutations (POST /mutations), durable enqueue and drain vs direct calls")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-bench-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }

    for groups in [1, 8] {
        let namespace = "bench-offline-\(UUID().uuidString.prefix(8).lowercased())"
        let client = APIClient(
            environment: APIEnvironment(
                name: "bench", baseURL: serverURL.appendingPathComponent("ns").appendingPathComponent(namespace))
        ) {
            $0.interceptors = .standard()
        }
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        let queue = try MutationQueue(
            path: directory.appendingPathComponent("q\(groups).sqlite").path, client: client,
            configuration: configuration)

        let enqueueStart = ContinuousClock.now
        for i in 0..<mutations {
            try await queue.enqueue(
                .json(
                    id: "q-\(i)", method: .post, path: "/mutations", body: ["i": i],
                    group: "g\(i % groups)"))
        }
        let enqueueSeconds = seconds(ContinuousClock.now - enqueueStart)

        let drainStart = ContinuousClock.now
        let report = try await queue.flush()
        let drainSeconds = seconds(ContinuousClock.now - drainStart)
        guard report.sent == mutations, report.pending == 0 else {
            throw BenchFailure(description: "drain sent \(report.sent) of \(mutations), \(report.pending) pending")
        }

        let directStart = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            for lane in 0..<groups {
                tasks.addTask {
                    for i in stride(from: lane, to: mutations, by: groups) {
                        try await client.send(
                            Request<Void>.post(
                                "/mutations", body: ["i": i],
                                policy: MutationQueue.Configuration.defaultEndpointPolicy
                                    .with(\.idempotency, .key("d-\(i)"))))
                    }
                }
            }
            try await tasks.waitForAll()
        }
        let directSeconds = seconds(ContinuousClock.now - directStart)

        struct Log: Decodable {
            var applied: [Entry]
            struct Entry: Decodable { var key: String? }
        }
        let log = try await client.send(Request<Log>.get("/mutations"))
        guard Set(log.applied.compactMap(\.key)).count == 2 * mutations, log.applied.count == 2 * mutations else {
            throw BenchFailure(description: "server applied \(log.applied.count), expected \(2 * mutations) distinct")
        }
        if groups == 1 {
            print(
                String(
                    format: "  enqueue (durable commit each): %.0f mutations/s (%.2f ms each)",
                    Double(mutations) / enqueueSeconds, enqueueSeconds * 1000 / Double(mutations)))
        }
        let label = groups == 1 ? "1 group vs sequential calls" : "\(groups) groups vs \(groups) concurrent callers"
        print(
            String(
                format: "  drain, %@: queue %.0f/s, direct %.0f/s (queue/direct %.2f×)",
                label, Double(mutations) / drainSeconds, Double(mutations) / directSeconds, drainSeconds / directSeconds))
        await queue.stop()
    }
}

private func seconds(_ duration: Duration) -> Double {
    duration.benchSeconds
}
