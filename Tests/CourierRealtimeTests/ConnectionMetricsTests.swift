import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
@testable import CourierRealtime

/// `WebSocketClient.metrics` and the `WebSocketMetricsEvent`s of its sinks against the real
/// realtime server, whose own counters (messages and payload bytes in and out, connections,
/// refused handshakes) are the proof.
@Suite("WebSocket metrics against the real server")
struct ConnectionMetricsTests {
    /// Text (empty, ASCII, two-byte UTF-8, 1000 B) and binary (1 B, 70 000 B: a 64-bit frame
    /// length) messages: 6 messages, payload bytes known.
    private let messages: [WebSocketMessage] = [
        .text(""), .text("hello"), .text(String(repeating: "é", count: 10)), .text(String(repeating: "x", count: 1000)),
        .data(Data([7])), .data(Data(repeating: 0xAB, count: 70_000)),
    ]
    private var payloadBytes: Int { 0 + 5 + 20 + 1000 + 1 + 70_000 }

    private func client(
        _ variable: String, namespace: String, path: String, sink: CapturingMetricsSink,
        logger: CapturingNetworkLogger? = nil
    ) throws -> WebSocketClient {
        var configuration = WebSocketClient.Configuration(
            url: try RealtimeServers.url(variable).appendingPathComponent("ns/\(namespace)/\(path)"))
        configuration.keepalive = nil
        configuration.reconnect = .never
        configuration.metrics = [sink]
        configuration.logger = logger
        return WebSocketClient(configuration: configuration)
    }

    /// Sends every message and waits for as many answers.
    private func exchange(_ client: WebSocketClient) async throws -> Collected<WebSocketMessage> {
        let received = Collected(client.messages())
        await client.connect()
        try await eventually("open") { await client.state == .open }
        for message in messages { try await client.send(message) }
        try await eventually("answers") { received.all.count == messages.count }
        return received
    }

    @Test func countsMessagesAndPayloadBytesEachWayAndTheServersCloseCode() async throws {
        let namespace = RealtimeServers.namespace("metrics")
        let sink = CapturingMetricsSink()
        // big-echo answers each message doubled: received bytes are twice the sent ones.
        let client = try client("COURIER_WS_URL", namespace: namespace, path: "big-echo", sink: sink)
        _ = try await exchange(client)

        let live = await client.metrics
        #expect(live.messagesSent == 6 && live.bytesSent == payloadBytes)
        #expect(live.messagesReceived == 6 && live.bytesReceived == 2 * payloadBytes)
        let stats = try await RealtimeServers.control(namespace, "action=stats")
        #expect(stats["messagesIn"] as? Int == 6 && stats["bytesIn"] as? Int == payloadBytes, "\(stats)")
        #expect(stats["messagesOut"] as? Int == 6 && stats["bytesOut"] as? Int == 2 * payloadBytes, "\(stats)")
        #expect(sink.webSocketEvents.isEmpty)  // reported when the connection ends

        try await RealtimeServers.control(namespace, "action=close&code=4001&reason=shift%20over")
        try await eventually("closed by the server") {
            await client.state == .closed(code: .init(rawValue: 4001), reason: "shift over")
        }
        let metrics = await client.metrics
        #expect(metrics.connects == 1 && metrics.reconnects == 0 && metrics.handshakeFailures == 0)
        #expect(metrics.closeCodes == [WebSocketCloseCode(rawValue: 4001): 1])
        #expect(metrics.lastCloseCode == WebSocketCloseCode(rawValue: 4001))
        #expect(metrics.messagesSent == 6 && metrics.bytesSent == payloadBytes)
        #expect(metrics.messagesReceived == 6 && metrics.bytesReceived == 2 * payloadBytes)

        let events = sink.webSocketEvents
        try #require(events.count == 1)
        let event = events[0]
        #expect(event.closeCode == 4001 && event.handshakeFailure == nil && !event.isReconnect)
        #expect(event.messagesSent == 6 && event.bytesSent == payloadBytes)
        #expect(event.messagesReceived == 6 && event.bytesReceived == 2 * payloadBytes)
        #expect(event.openDuration != nil)
        #expect(event.wireBytesSent == nil && event.wireBytesReceived == nil)  // no permessage-deflate
        let server = try RealtimeServers.url("COURIER_WS_URL")
        #expect(event.endpoint == "ws://\(server.host ?? ""):\(server.port ?? 0)/ns/\(namespace)/big-echo")
    }

    /// With permessage-deflate the counts stay payload bytes (before compression / after
    /// inflation), while the server proves every message travelled compressed.
    @Test func countsPayloadBytesNotCompressedBytesUnderPermessageDeflate() async throws {
        let namespace = RealtimeServers.namespace("metrics-deflate")
        let sink = CapturingMetricsSink()
        let client = try client("COURIER_WS_DEFLATE_URL", namespace: namespace, path: "echo", sink: sink)
        let received = try await exchange(client)
        #expect(received.all == messages)
        await client.close()
        let stats = try await RealtimeServers.control(namespace, "action=stats")
        #expect(stats["compressedIn"] as? Int == 6, "\(stats)")
        #expect(stats["bytesIn"] as? Int == payloadBytes && stats["bytesOut"] as? Int == payloadBytes, "\(stats)")
        let event = try #require(sink.webSocketEvents.first)
        #expect(sink.webSocketEvents.count == 1)
        #expect(event.bytesSent == payloadBytes && event.bytesReceived == payloadBytes)
        // The compressed sizes, as the server counted the frames' payloads.
        let wireIn = try #require(stats["wireBytesIn"] as? Int)
        let wireOut = try #require(stats["wireBytesOut"] as? Int)
        #expect(event.wireBytesSent == wireIn && event.wireBytesReceived == wireOut, "\(stats)")
        #expect(wireIn < payloadBytes / 10 && wireOut < payloadBytes / 10)
        #expect(event.closeCode == 1000)
        #expect(await client.metrics.closeCodes == [.normalClosure: 1])
    }

    /// TCP drop, then handshakes refused with 503 while the test walks the backoff on an injected
    /// clock, then accepted: connects, reconnects and handshake failures match the server's counts.
    @Test func countsReconnectsAndRefusedHandshakes() async throws {
        let namespace = RealtimeServers.namespace("metrics-reconnect")
        let clock = TestClock(mode: .manual)
        let sink = CapturingMetricsSink()
        var configuration = WebSocketClient.Configuration(
            url: try RealtimeServers.url("COURIER_WS_URL").appendingPathComponent("ns/\(namespace)/echo"))
        configuration.keepalive = nil
        configuration.reconnect = ReconnectPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(2), jitter: .none)
        configuration.metrics = [sink]
        let client = WebSocketClient(
            configuration: configuration, transport: RFC6455Transport.curl(), clock: clock, random: { 0.5 })
        let received = Collected(client.messages())
        await client.connect()
        try await eventually("open") { await client.state == .open }
        try await client.send(text: "before")
        try await eventually("echo") { received.all.count == 1 }

        try await RealtimeServers.control(namespace, "action=drop&refuse=1")
        try await walkBackoffUntilAccepted(client, clock: clock, namespace: namespace)
        try await eventually("reopened") {
            let (state, connects) = (await client.state, await client.metrics.connects)
            return state == .open && connects == 2
        }
        try await client.send(text: "after")
        try await eventually("echo") { received.all.count == 2 }
        await client.close()

        let stats = try await RealtimeServers.control(namespace, "action=stats")
        let refused = try #require(stats["refused"] as? Int)
        #expect(refused >= 3)
        let metrics = await client.metrics
        #expect(metrics.connects == 2 && stats["connections"] as? Int == 2)
        #expect(metrics.reconnects == 1)
        #expect(metrics.handshakeFailures == refused)
        #expect(metrics.closeCodes == [.abnormalClosure: 1, .normalClosure: 1])
        #expect(metrics.messagesSent == 2 && metrics.bytesSent == 11 && metrics.messagesReceived == 2)

        let events = sink.webSocketEvents
        #expect(events.count == 2 + refused)
        #expect(events.first?.closeCode == 1006 && events.first?.isReconnect == false)
        let failures = events.filter { $0.handshakeFailure != nil }
        #expect(failures.count == refused)
        #expect(failures.allSatisfy { $0.handshakeFailure == "handshakeRejected" && $0.handshakeStatus == 503 && $0.isReconnect })
        #expect(events.last?.closeCode == 1000 && events.last?.isReconnect == true && events.last?.messagesSent == 1)
    }
}
