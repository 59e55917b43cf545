import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
@testable import CourierRealtime

@Suite("WebSocketClient against the real servers (libcurl, ws:// and wss://)")
struct RealServerTests {
    private func feedConfiguration(_ namespace: String, path: String = "feed") throws -> WebSocketClient.Configuration {
        var configuration = WebSocketClient.Configuration(
            url: try RealtimeServers.url("COURIER_WS_URL").appendingPathComponent("ns/\(namespace)/\(path)"))
        configuration.keepalive = nil
        return configuration
    }

    /// A client of the feed server at `namespace` on `clock` (manual by default), reconnecting by
    /// `reconnect`.
    private func feedClient(
        _ namespace: String, reconnect: ReconnectPolicy = ReconnectPolicy(initialDelay: .seconds(1), jitter: .none),
        clock: TestClock = TestClock(mode: .manual)
    ) throws -> (WebSocketClient, TestClock) {
        var configuration = try feedConfiguration(namespace)
        configuration.reconnect = reconnect
        let client = WebSocketClient(
            configuration: configuration, transport: RFC6455Transport.curl(), clock: clock, random: { 0.5 })
        return (client, clock)
    }

    /// The feed server's stats at `namespace` once it has read every message `client` sent.
    private func statsOnceAllIsRead(_ client: WebSocketClient, _ namespace: String) async throws -> [String: Any] {
        let sent = await client.metrics.messagesSent
        try await eventually("the server read every message") {
            let stats = try? await RealtimeServers.control(namespace, "action=stats")
            return stats?["messagesIn"] as? Int == sent
        }
        return try await RealtimeServers.control(namespace, "action=stats")
    }

    private func topic(_ name: String) -> Subscription {
        Subscription(
            id: name, subscribe: .text(#"{"op":"subscribe","topic":"\#(name)"}"#),
            unsubscribe: .text(#"{"op":"unsubscribe","topic":"\#(name)"}"#))
    }

    private func subscribes(_ stats: [String: Any]) -> [[String]] {
        ((stats["subscribes"] as? [[Any]]) ?? []).map { $0.map { "\($0)" } }
    }

    private func subscribeCount(_ namespace: String) async -> Int {
        subscribes((try? await RealtimeServers.control(namespace, "action=stats")) ?? [:]).count
    }

    @Test func wssEchoWithACustomCA() async throws {
        let url = try RealtimeServers.url("COURIER_WSS_URL").appendingPathComponent("ns/\(RealtimeServers.namespace("tls"))/echo")
        var configuration = WebSocketClient.Configuration(url: url)
        configuration.trustedCertificateAuthorities = URL(fileURLWithPath: try RealtimeServers.url("COURIER_WS_CA_FILE").path)
        configuration.reconnect = .never
        let client = WebSocketClient(configuration: configuration)
        let messages = Collected(client.messages())
        await client.connect()
        try await eventually("open over TLS") { await client.state == .open }
        try await client.send(text: "über TLS")
        try await client.send(data: Data([0, 1, 2, 255]))
        try await eventually("echoes") { messages.all.count == 2 }
        #expect(messages.all == [.text("über TLS"), .data(Data([0, 1, 2, 255]))])
        await client.close()
        #expect(await client.state == .closed(code: .normalClosure, reason: ""))
    }

    @Test func wssWithoutTheCAFailsVerification() async throws {
        let url = try RealtimeServers.url("COURIER_WSS_URL").appendingPathComponent("ns/x/echo")
        await #expect(throws: WebSocketError.self) {
            _ = try await RFC6455Transport.curl().connect(WebSocketRequest(url: url))
        }
    }

    /// Issue 14's scripted scenario: T1 before connect, T2 after, T3 subscribed then unsubscribed;
    /// the server drops TCP (1006) and refuses handshakes (503) while the test walks the injected
    /// clock through 3 s of backoff; then exactly one subscribe each for T1 and T2 on the new
    /// connection, none for T3, and one `reconnected`.
    @Test func dropAndRefuseThenResubscribeExactlyOnce() async throws {
        let namespace = RealtimeServers.namespace("scenario")
        let (client, clock) = try feedClient(
            namespace, reconnect: ReconnectPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(2), jitter: .none))
        let events = Collected(client.events())
        await client.subscribe(topic("T1"))
        await client.connect()
        try await eventually("open") { await client.state == .open }
        await client.subscribe(topic("T2"))
        await client.subscribe(topic("T3"))
        await client.unsubscribe("T3")
        try await eventually("server saw 3 subscribes") { await self.subscribeCount(namespace) == 3 }

        try await RealtimeServers.control(namespace, "action=drop&refuse=1")
        // Walk the backoff: each refused attempt sleeps on the injected clock; once 3 s of backoff
        // have passed the server accepts again and the next advance lets the attempt through.
        let waited = try await walkBackoffUntilAccepted(client, clock: clock, namespace: namespace)
        #expect(waited >= .seconds(3))
        try await eventually("reconnected") { events.all.contains(.reconnected) }
        let stats = try await RealtimeServers.control(namespace, "action=stats")
        try await eventually("resubscribed") { await self.subscribeCount(namespace) == 5 }
        let all = subscribes(try await RealtimeServers.control(namespace, "action=stats"))
        #expect(all == [["1", "T1"], ["1", "T2"], ["1", "T3"], ["2", "T1"], ["2", "T2"]])
        #expect((stats["refused"] as? Int ?? 0) >= 3)
        #expect(events.all.filter { $0 == .reconnected }.count == 1)
        #expect(await client.lastFailure == .handshakeRejected(status: 503))
        await client.close()
    }

    /// A view that appears again registers its subscription again, unchanged. The connection
    /// holds it already: the server gets one subscribe for it (the feed server counts each; a
    /// graphql-transport-ws server closes the connection with 4409 on a second one with the same
    /// id, which ends every subscription on it), and a reconnect re-sends it once.
    @Test(.timeLimit(.minutes(1)))
    func registeringTheSameSubscriptionAgainSendsNothing() async throws {
        let namespace = RealtimeServers.namespace("same-again")
        let (client, clock) = try feedClient(namespace)
        let messages = Collected(client.messages())
        await client.subscribe(topic("news"))
        await client.connect()
        try await eventually("open") { await client.state == .open }
        await client.subscribe(topic("news"))
        await client.subscribe(topic("news"))
        // The server reads in order: once the post comes back, it has read everything before it.
        try await client.send(text: #"{"op":"post","topic":"news","text":"one"}"#)
        try await eventually("the post came back") { messages.all.count == 1 }
        #expect(subscribes(try await RealtimeServers.control(namespace, "action=stats")) == [["1", "news"]])

        try await RealtimeServers.control(namespace, "action=drop")
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        try await eventually("open again") { await client.state == .open }
        await client.subscribe(topic("news"))
        try await client.send(text: #"{"op":"post","topic":"news","text":"two"}"#)
        try await eventually("the second post came back") { messages.all.count == 2 }
        #expect(subscribes(try await RealtimeServers.control(namespace, "action=stats")) == [["1", "news"], ["2", "news"]])
        await client.close()
    }

    /// A view that appears and goes at once: its subscribe is issued from a low-priority task and
    /// its unsubscribe right after, from a high-priority one. The client's own sends each ran in a
    /// task of their own, which raced to the connection: the unsubscribe overtook the subscribe
    /// (nearly every pair), and the server stayed subscribed to topics the app had left.
    @Test(.timeLimit(.minutes(1)))
    func anUnsubscribeNeverOvertakesItsSubscribe() async throws {
        let namespace = RealtimeServers.namespace("order")
        let (client, _) = try feedClient(namespace, reconnect: .never, clock: TestClock())
        await client.connect()
        try await eventually("open") { await client.state == .open }
        for round in 0..<10 {
            await withTaskGroup(of: Void.self) { group in
                for index in 0..<50 {
                    let name = "t\(round)-\(index)"
                    group.addTask(priority: .background) { await client.subscribe(topic(name)) }
                    group.addTask(priority: .high) { await client.unsubscribe(name) }
                }
            }
        }
        let stats = try await statsOnceAllIsRead(client, namespace)
        let subscribed = try #require(stats["subscribed"] as? [String])
        // A pair the actor ran unsubscribe-first leaves a registered topic: the server holds it too.
        let registered = await client.subscriptions.map(\.id)
        #expect(Set(subscribed) == Set(registered), "server: \(subscribed.count) topics, registry: \(registered.count)")
        #expect((stats["unsubscribes"] as? [Any])?.count ?? 0 > 0)
        await client.close()
    }

    /// A view changes its filter (the subscription is replaced by a new version) and goes at
    /// once (it unsubscribes), from two tasks. Replacing sends the old version's unsubscribe, then
    /// the new subscribe: the app's unsubscribe must not get between the two, or the server is
    /// left subscribed to the new version of a topic the app has left.
    @Test(.timeLimit(.minutes(1)))
    func aReplacementAndAnUnsubscribeLeaveTheServerHoldingWhatIsRegistered() async throws {
        let namespace = RealtimeServers.namespace("replace")
        let (client, _) = try feedClient(namespace, reconnect: .never, clock: TestClock())
        func version(_ id: String, _ number: Int) -> Subscription {
            Subscription(
                id: id, subscribe: .text(#"{"op":"subscribe","topic":"\#(id)-v\#(number)"}"#),
                unsubscribe: .text(#"{"op":"unsubscribe","topic":"\#(id)-v\#(number)"}"#))
        }
        let ids = (0..<200).map { "r\($0)" }
        for id in ids { await client.subscribe(version(id, 1)) }
        await client.connect()
        try await eventually("open") { await client.state == .open }
        await withTaskGroup(of: Void.self) { group in
            for id in ids {
                group.addTask { await client.subscribe(version(id, 2)) }
                group.addTask { await client.unsubscribe(id) }
            }
        }
        let stats = try await statsOnceAllIsRead(client, namespace)
        let subscribed = try #require(stats["subscribed"] as? [String])
        let registered = await client.subscriptions.map { subscription -> String in
            guard case .text(let text) = subscription.subscribe else { return "" }
            return String(text.split(separator: "\"")[7])
        }
        let stale = Set(subscribed).subtracting(registered)
        #expect(
            stale.isEmpty && Set(registered).isSubset(of: subscribed),
            "\(stale.count) of \(subscribed.count) topics the server holds are not registered (registry: \(registered.count)): \(stale.sorted().prefix(5))"
        )
        await client.close()
    }

    @Test func aSilentRealServerFailsWithinPingIntervalPlusTimeout() async throws {
        let clock = TestClock(mode: .manual)
        var configuration = WebSocketClient.Configuration(
            url: try RealtimeServers.url("COURIER_WS_CONFORMANCE_URL").appendingPathComponent(
                "ns/\(RealtimeServers.namespace("silent"))/silent"))
        configuration.keepalive = KeepalivePolicy(interval: .seconds(20), timeout: .seconds(5))
        configuration.reconnect = .never
        let client = WebSocketClient(
            configuration: configuration, transport: RFC6455Transport.curl(), clock: clock, random: { 0.5 })
        await client.connect()
        try await eventually("open") { await client.state == .open }
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(20))
        try await clock.waitForSleepers(count: 1)
        #expect(await client.state == .open)
        clock.advance(by: .seconds(5))
        try await eventually("failed") { if case .closed = await client.state { return true } else { return false } }
        #expect(await client.state == .closed(code: .abnormalClosure, reason: WebSocketError.pongTimeout(seconds: 5).description))
        #expect(await client.lastFailure == .pongTimeout(seconds: 5))
        #expect(clock.now.offset == .seconds(25))
    }

    @Test func handshakeCarriesTheBearerTokenAndRefreshesOnceOn401() async throws {
        let namespace = RealtimeServers.namespace("auth")
        let refreshes = Locked(0)
        let stub = StubTransport { _ in
            refreshes.withLock { $0 += 1 }
            return .json(#"{"access_token":"fresh-token","refresh_token":"r2","token_type":"Bearer","expires_in":3600}"#)
        }
        let store = InMemoryTokenStore(AuthTokens(accessToken: "stale-token", refreshToken: "r1"))
        let tokens = TokenManager(
            store: store, transport: stub, grant: .oauth2(tokenURL: URL(string: "https://auth.test/token")!))
        var configuration = try feedConfiguration(namespace, path: "auth-feed")
        configuration.tokenManager = tokens
        let client = WebSocketClient(
            configuration: configuration, transport: RFC6455Transport.curl(), clock: TestClock(), random: { 0.5 })
        await client.connect()
        try await eventually("open") { await client.state == .open }
        let stats = try await RealtimeServers.control(namespace, "action=stats")
        #expect((stats["tokens"] as? [String]) == ["stale-token", "fresh-token"])
        #expect(refreshes.current == 1)
        await client.close()
    }

    /// An app's outbox flushes at `open`: after a reconnect, a post to a subscribed room sent
    /// from there reaches the server after the room's re-subscribe, so the room broadcasts it back.
    @Test(.timeLimit(.minutes(1)))
    func aPostSentAtOpenAfterAReconnectReachesTheSubscribedRoom() async throws {
        let namespace = RealtimeServers.namespace("order")
        let (client, clock) = try feedClient(namespace)
        for name in ["news", "sports", "weather", "room"] { await client.subscribe(topic(name)) }
        let messages = Collected(client.messages())
        await client.connect()
        try await eventually("open") { await client.state == .open }
        try await RealtimeServers.control(namespace, "action=drop")
        try await clock.waitForSleepers(count: 1)  // backing off
        let flusher = Task {
            for await state in client.states() where state == .open {
                try? await client.send(.text(#"{"op":"post","topic":"room","text":"hello"}"#))
                return
            }
        }
        clock.advance(by: .seconds(1))
        await flusher.value
        try await eventually("the post came back from the room") {
            messages.all.contains { if case .text(let text) = $0 { text.contains("hello") } else { false } }
        }
        await client.close()
    }
}
