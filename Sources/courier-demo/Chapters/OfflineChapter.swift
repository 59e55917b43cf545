import Foundation
import Courier
import CourierOffline

/// The offline chapter: the backend goes down (the reference server's down switch: every
/// mutation answers 503), the user keeps editing, the edits wait in the durable queue and the UI
/// shows them as pending; the backend comes back, connectivity turns online and the queue drains
/// in order.
func runOfflineChapter(_ demo: Demo) async throws {
    demo.chapter("Offline: edits wait in a durable queue and drain in order")
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-demo-\(demo.namespace)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }

    let connectivity = OutcomeConnectivityMonitor()
    let client = demo.makeClient { $0.interceptors = .standard() + [connectivity.interceptor] }
    let control = demo.makeClient()
    var configuration = MutationQueue.Configuration()
    configuration.backoff = Backoff(initialDelay: .milliseconds(200), maximumDelay: .seconds(2), jitter: .equal)
    let queue = try await MutationQueue.open(
        path: directory.appendingPathComponent("outbox.sqlite").path, client: client,
        configuration: configuration)
    await queue.flushes(on: connectivity)
    connectivity.startProbing(
        client: client, path: "/_health",
        backoff: Backoff(initialDelay: .milliseconds(100), maximumDelay: .milliseconds(400), jitter: .equal))

    // The backend goes down; three 503s in a row and the status bar says so.
    try await control.send(Request<Void>.post("/_down", body: ["down": true]))
    for probe in 0..<3 {
        _ = try? await client.send(Request<Void>.post("/mutations", body: ["probe": probe]))
    }
    demo.say("status: \(connectivity.status)")

    // The user edits three notes; each edit is committed to SQLite before the UI moves on.
    let edits = ["buy milk", "call Ana", "ship v1.0"]
    for (index, text) in edits.enumerated() {
        try await queue.enqueue(.json(id: "note-\(index)", method: .post, path: "/mutations", body: ["note": text]))
    }
    // The first note is edited again while offline: coalesced, only the newest text will be sent.
    try await queue.enqueue(.json(id: "note-0", method: .post, path: "/mutations", body: ["note": "buy oat milk"]))
    let pending = try await queue.pending()
    demo.say(
        "\(pending.count) changes waiting: "
            + pending.map { String(decoding: $0.mutation.body ?? Data(), as: UTF8.self) }.joined(separator: ", "))
    if let age = try await queue.oldestPendingAge() {
        demo.say("oldest pending: \(age.formatted(.units(allowed: [.milliseconds])))")
    }

    // The backend returns; the probe sees it, the monitor turns online and the queue drains.
    let events = await queue.events()
    try await control.send(Request<Void>.post("/_down", body: ["down": false]))
    for await event in events {
        if case .sent(let status) = event.outcome {
            demo.say("sent \(event.mutationID) → HTTP \(status); \(event.pendingCount) waiting")
        }
        // Done when nothing waits. A change already handed to the network when it was edited
        // again (here: held by the host's Retry-After pause) is not taken back: the new text
        // goes as a change of its own, under the next idempotency key.
        if event.pendingCount == 0 { break }
    }
    demo.say("status: \(connectivity.status)")

    struct Log: Decodable {
        struct Entry: Decodable {
            var key: String?
            var payload: [String: String]
        }
        var applied: [Entry]
    }
    let log = try await control.send(Request<Log>.get("/mutations"))
    demo.say(
        "server applied, in order: "
            + log.applied.compactMap { entry in entry.key.map { "\($0)=\(entry.payload["note"] ?? "?")" } }.joined(
                separator: ", "))
    connectivity.stopProbing()
    await queue.stop()
}
