import Foundation
import Courier

/// The core chapters: the list screen with a filter, create/update/delete, and the error paths a
/// user can meet, each printed as the screen would show it.
func runCoreChapters(_ demo: Demo) async throws {
    let client = demo.makeClient()
    let remote = ItemsRemoteDataSource(client: client)
    let repository = ItemsRepository(remote: remote)

    demo.chapter("Catalog list (GET /items?limit=10&offset=0&status=active)")
    switch await repository.activeItems() {
    case .loaded(let items):
        for item in items { demo.say("• #\(item.id) \(item.name) — \(price(item.price)) [\(item.status.rawValue)]") }
    case .failed(let message, _): demo.say("error: \(message)")
    case .idle: demo.say("(cancelled)")
    }

    demo.chapter("Create, update, delete")
    let created = try await remote.create(ItemDraft(name: "Reading chair", price: 129, tags: ["furniture"]))
    demo.say("created #\(created.id) \"\(created.name)\" (201)")
    let renamed = try await remote.rename(created.id, to: "Reading chair (oak)", price: 149)
    demo.say("patched #\(renamed.id) → \"\(renamed.name)\" \(price(renamed.price))")
    try await remote.delete(created.id)
    demo.say("deleted #\(created.id) (204, empty body)")
    if case .failed(let message, let error) = await repository.item(created.id) {
        demo.say("opening #\(created.id) again shows: \"\(message)\"  [\(kind(error))]")
    }

    demo.chapter("Error paths as the user sees them")
    if case .failed(let message, let error) = await repository.create(ItemDraft(name: "", price: -1)) {
        demo.say("save with empty name → \"\(message)\"  [\(kind(error))]")
        if case .unprocessable(let problem) = error {
            for field in problem.fieldErrors.keys.sorted() {
                demo.say("    \(field): \(problem.fieldErrors[field]?.joined(separator: ", ") ?? "")")
            }
        }
    }
    do {
        _ = try await client.send(ItemsAPI.BrokenGateway())
    } catch let error as NetworkError {
        let failed = error.failedResponse
        demo.say(
            "gateway down → \"\(error.userMessage)\"  [\(kind(error)) \(failed?.statusCode ?? 0) \(failed?.contentType ?? "?")]")
        demo.say("    for the log: \(failed?.snippet.prefix(60) ?? "")…")
    }
    let slow = Task { try await client.send(ItemsAPI.Slow()) }
    try await Task.sleep(for: .milliseconds(100))
    let cancelledAt = ContinuousClock.now
    slow.cancel()
    switch await slow.result {
    case .failure(let error as NetworkError) where error.isCancellation:
        demo.say(
            "leaving the screen cancels the load → .cancelled, \(milliseconds(ContinuousClock.now - cancelledAt)) ms after the cancel (nothing shown)"
        )
    case .failure(let error): demo.say("unexpected: \(error)")
    case .success: demo.say("unexpected: the slow call finished")
    }
}

private func price(_ value: Double) -> String { String(format: "$%.2f", value) }

private func milliseconds(_ duration: Duration) -> Int {
    Int(duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000)
}

/// The case name of an error, for the demo's annotations.
func kind(_ error: NetworkError) -> String {
    String(describing: error).split(separator: ":").first.map(String.init) ?? "error"
}
