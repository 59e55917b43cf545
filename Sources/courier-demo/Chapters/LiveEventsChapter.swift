import Foundation
import Courier
import CourierTransfers

/// The "live" chapter, Server-Sent Events part: tailing an order feed
/// (TestServer/routes_sse.py) while the server restarts it. The feed reconnects after the
/// server's `retry`, sends `Last-Event-ID`, and the server resumes right after the last event the
/// app saw: nothing is missed or shown twice. The server's 204 after the last order ends the feed.
func runLiveEventsChapter(_ demo: Demo) async throws {
    demo.chapter("Live: tailing a Server-Sent Events feed across a server restart")
    let client = demo.makeClient()
    let configuration = ServerSentEvents.Configuration(
        reconnect: .init(initialDelay: .milliseconds(300), maximumDelay: .seconds(2)))
    let feed = client.events(
        Request<Void>.get("/sse/orders", query: ["count": "8", "interval": "0.1", "retry": "500"]),
        configuration: configuration)
    let states = Task {
        for await state in feed.states() where state != .open { demo.say("      state: \(state)") }
    }
    var seen: [String] = []
    for try await event in feed {
        seen.append(event.lastEventID)
        demo.say("feed  #\(event.lastEventID) \(event.type): \(event.data.replacingOccurrences(of: "\n", with: " ⏎"))")
        if seen.count == 3 {
            demo.say("-- the server restarts the feed: every connection dropped --")
            _ = try await client.send(Request<Data>.post("/_sse/orders/restart"))
        }
        if seen.count > 20 { break }  // bounded, whatever the server does
    }
    await states.value
    let record = try await client.send(Request<FeedRecord>.get("/_sse/orders"))
    let resumes = record.lastEventIds.map { $0.map { "\"\($0)\"" } ?? "none" }.joined(separator: ", ")
    demo.say("saw \(seen.count) events, ids \(seen.joined(separator: " ")), each once")
    demo.say("server: \(record.connections) connections, Last-Event-ID received: \(resumes); answers \(record.statuses)")
    demo.say("resume point for next launch: lastEventID \"\(feed.lastEventID)\"")
}

/// The reference server's record of a feed (`GET /_sse/{feed}`).
private struct FeedRecord: Decodable, Sendable {
    var connections: Int
    var lastEventIds: [String?]
    var statuses: [Int]
}
