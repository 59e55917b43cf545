import Foundation
import Testing
import Courier
import CourierTesting
@testable import CourierRealtime

/// What a `WebSocketClient` logs about its connections, over a scripted transport: every
/// handshake, its outcome and each connection's end — with no secret of the URL, the header
/// fields or the offered subprotocols in any line.
@Suite("WebSocket connection logs and keepalive metrics")
struct ConnectionLoggingTests {
    private let secrets = ["SECRET-QUERY-TOKEN", "SECRET-AUTH-TOKEN", "SECRET-API-KEY", "SECRET-PROTOCOL-TOKEN"]

    private func configuration(logger: CapturingNetworkLogger) throws -> WebSocketClient.Configuration {
        var configuration = WebSocketClient.Configuration(
            url: try #require(URL(string: "wss://api.example.com/live?access_token=SECRET-QUERY-TOKEN&room=5")))
        configuration.headers = ["Authorization": "Bearer SECRET-AUTH-TOKEN", "X-API-Key": "SECRET-API-KEY"]
        configuration.subprotocols = ["chat.v1", "bearer.SECRET-PROTOCOL-TOKEN"]
        configuration.keepalive = nil
        configuration.reconnect = ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(1), jitter: .none)
        configuration.logger = logger
        return configuration
    }

    @Test func logsHandshakesOutcomesAndClosesWithoutSecrets() async throws {
        let logger = CapturingNetworkLogger()
        let clock = TestClock(mode: .manual)
        let transport = FakeTransport(script: [.reject(503), .accept])
        let client = WebSocketClient(
            configuration: try configuration(logger: logger), transport: transport, clock: clock, random: { 0.5 })
        await client.connect()
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        try await eventually("open") { await client.state == .open }
        try await client.send(text: "hello")
        // The server closes with a reason that repeats a token.
        let connection = try #require(transport.connections.first)
        connection.end(code: WebSocketCloseCode(rawValue: 4000), reason: "bye SECRET-AUTH-TOKEN")
        try await eventually("closed entry") { logger.entries.contains { $0.event == .connectionClosed } }
        await client.close()

        let events = logger.entries.map(\.event)
        #expect(Array(events.prefix(5)) == [.request, .failure, .request, .response, .connectionClosed])
        for secret in secrets { #expect(!logger.text.contains(secret), "\(secret) in \(logger.text)") }
        // The handshake's header fields were logged at debug level — redacted, not left out.
        #expect(transport.requests.first?.headers.contains { $0.value == "Bearer SECRET-AUTH-TOKEN" } == true)
        let lines = logger.lines
        #expect(lines.contains("GET wss://api.example.com/live?access_token=<redacted>&room=5"))
        #expect(lines.contains("Authorization: Bearer <redacted>"))
        #expect(lines.contains("X-API-Key: <redacted>"))
        #expect(lines.contains("Sec-WebSocket-Protocol: <redacted>"))
        #expect(lines.contains("reason: bye <redacted>"))
        let failure = try #require(logger.entries.first { $0.event == .failure })
        #expect(failure.level == .error && failure.summary.hasPrefix("✗ WS /live handshakeRejected (503) after "))
        let closed = try #require(logger.entries.first { $0.event == .connectionClosed })
        #expect(closed.level == .notice)
        #expect(closed.summary.contains("closed 4000 after "))
        #expect(closed.summary.contains("sent 1 message 5 B, received 0 messages 0 B"))
        #expect(closed.requestID == logger.entries[2].requestID)  // one ID per attempt
    }

    @Test func infoLevelLogsNoHeaderFields() async throws {
        let logger = CapturingNetworkLogger(minimumLevel: .info)
        let client = WebSocketClient(
            configuration: try configuration(logger: logger), transport: FakeTransport(), clock: TestClock(),
            random: { 0.5 })
        await client.connect()
        try await eventually("open") { await client.state == .open }
        await client.close()
        #expect(logger.entries.map(\.event) == [.response, .connectionClosed])
        #expect(logger.entries.map(\.level) == [.info, .info])
        #expect(!logger.lines.contains { $0.hasPrefix("Authorization") })
        for secret in secrets { #expect(!logger.text.contains(secret)) }
    }

    @Test func countsPingsAndPongRoundTrips() async throws {
        let clock = TestClock(mode: .manual)
        var configuration = WebSocketClient.Configuration(url: try #require(URL(string: "ws://example.test/live")))
        configuration.keepalive = KeepalivePolicy(interval: .seconds(20), timeout: .seconds(5))
        let sink = CapturingMetricsSink()
        configuration.metrics = [sink]
        let client = WebSocketClient(configuration: configuration, transport: FakeTransport(), clock: clock, random: { 0.5 })
        await client.connect()
        try await eventually("open") { await client.state == .open }
        for _ in 0..<2 {
            try await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(20))
            try await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(5))
        }
        try await eventually("two pongs") { await client.metrics.pongsReceived == 2 }
        let metrics = await client.metrics
        #expect(metrics.pingsSent == 2 && metrics.lastRoundTripTime == .zero)
        await client.close()
        let event = try #require(sink.webSocketEvents.first)
        #expect(event.pingsSent == 2 && event.pongsReceived == 2 && event.closeCode == 1000)
    }
}
