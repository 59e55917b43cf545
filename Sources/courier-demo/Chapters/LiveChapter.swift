import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierRealtime

/// The "live" chapter: a chat-like feed over WebSocket (TestServer/realtime_server.py) that
/// survives a server restart — the client backs off, reconnects, re-sends its subscription once,
/// and a sequence gap makes it ask the server for the message it missed.
func runLiveChapter(_ demo: Demo) async throws {
    demo.chapter("Live: a chat feed over WebSocket that survives a server restart")
    guard let base = ProcessInfo.processInfo.environment["COURIER_WS_URL"].flatMap(URL.init(string:)) else {
        demo.say("COURIER_WS_URL is not set (scripts/demo sets it): skipping")
        return
    }
    let room = "room:lobby"
    var configuration = WebSocketClient.Configuration(url: base.appendingPathComponent("ns/\(demo.namespace)/feed"))
    configuration.reconnect = ReconnectPolicy(initialDelay: .milliseconds(300), maximumDelay: .seconds(2))
    configuration.keepalive = KeepalivePolicy(interval: .seconds(10), timeout: .seconds(5))
    configuration.sequenceTracking = SequenceTracking(
        sequenceNumber: { LiveFeed.decode($0)?.seq },
        requestMissed: { .text(#"{"op":"replay","topic":"\#(room)","from":\#($0.lowerBound),"to":\#($0.upperBound)}"#) })
    let client = WebSocketClient(configuration: configuration)
    let feed = LiveFeed()

    let states = Task {
        for await state in client.states() { feed.note("state: \(LiveFeed.describe(state))") }
    }
    let events = Task {
        for await event in client.events() {
            switch event {
            case .message(let message):
                if let line = LiveFeed.decode(message) {
                    feed.show("#\(line.seq) \(line.text)\(line.replayed == true ? " (replayed)" : "")")
                }
            case .reconnected: feed.note("reconnected: subscription re-sent, refetching what was missed")
            case .gap(let missing): feed.note("gap: messages \(missing) missing, asked the server to replay them")
            }
        }
    }
    defer {
        states.cancel()
        events.cancel()
    }

    await client.subscribe(
        Subscription(
            id: room, subscribe: .text(#"{"op":"subscribe","topic":"\#(room)"}"#),
            unsubscribe: .text(#"{"op":"unsubscribe","topic":"\#(room)"}"#)))
    await client.connect()
    try await feed.waitFor("open") { await client.state == .open }
    try await LiveFeed.control(base, demo.namespace, "action=stats")  // the subscription has landed
    for text in ["Hi, anyone here?", "Deploy starts in 5 minutes."] {
        try await client.send(text: #"{"op":"post","topic":"\#(room)","text":"\#(text)"}"#)
    }
    try await feed.waitFor("two messages") { feed.messages.count == 2 }

    demo.say("-- the server restarts: every socket dropped, subscriptions forgotten, refusing for 1 s --")
    try await LiveFeed.control(base, demo.namespace, "action=restart&down=1")
    // A colleague posts while we are disconnected: we miss #3.
    try await LiveFeed.control(base, demo.namespace, "action=post&topic=\(room)&text=Rolling%20back%20one%20host.")
    try await feed.waitFor("reconnected") { feed.notes.contains { $0.hasPrefix("reconnected") } }

    // The next live message is #4: the gap hook notices #3 is missing and asks for a replay.
    try await LiveFeed.control(base, demo.namespace, "action=post&topic=\(room)&text=Deploy%20done.")
    try await feed.waitFor("gap replayed") { feed.messages.contains { $0.contains("(replayed)") } }
    let stats = try await LiveFeed.control(base, demo.namespace, "action=stats")
    demo.say("server saw \(stats["connections"] ?? 0) connections and subscribes \(stats["subscribes"] ?? [])")
    await client.close()
    demo.say("closed: \(LiveFeed.describe(await client.state))")
}

/// What the "screen" of the live chapter shows: each message and connection note printed as it
/// arrives, between the chapter's own lines, in the order things happened.
final class LiveFeed: Sendable {
    struct Line: Decodable {
        var seq: Int
        var text: String
        var replayed: Bool?
    }

    private let lines = Locked((transcript: [String](), messages: [String](), notes: [String]()))
    var transcript: [String] { lines.current.transcript }
    var messages: [String] { lines.current.messages }
    var notes: [String] { lines.current.notes }

    func show(_ message: String) {
        lines.withLock {
            $0.messages.append(message)
            $0.transcript.append("feed  \(message)")
            Screen.shared.line("  feed  \(message)")
        }
    }
    func note(_ note: String) {
        lines.withLock {
            $0.notes.append(note)
            $0.transcript.append("      \(note)")
            Screen.shared.line("        \(note)")
        }
    }

    static func decode(_ message: WebSocketMessage) -> Line? {
        guard case .text(let text) = message else { return nil }
        return try? JSONDecoder().decode(Line.self, from: Data(text.utf8))
    }

    static func describe(_ state: ConnectionState) -> String {
        switch state {
        case .connecting: "connecting"
        case .open: "open"
        case .reconnecting(let attempt, let delay): "reconnecting (attempt \(attempt) in \(Int(delay / .milliseconds(1))) ms)"
        case .closed(let code, let reason): "closed \(code)\(reason.isEmpty ? "" : " \(reason)")"
        }
    }

    /// Polls `condition` every 50 ms for up to 10 s (the demo runs in real time).
    func waitFor(_ what: String, _ condition: @Sendable () async -> Bool) async throws {
        for _ in 0..<200 {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw DemoTimeout(what: what)
    }

    struct DemoTimeout: Error, CustomStringConvertible {
        let what: String
        var description: String { "live chapter: timed out waiting for \(what)" }
    }

    @discardableResult
    static func control(_ base: URL, _ namespace: String, _ query: String) async throws -> [String: Any] {
        let http = base.absoluteString.replacingOccurrences(of: "ws://", with: "http://")
        guard let url = URL(string: "\(http)/ns/\(namespace)/_control?\(query)") else { return [:] }
        let (data, _) = try await URLSession.shared.data(from: url)
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }
}
