import Foundation
import Testing
import Courier
import CourierTesting
@testable import CourierRealtime

/// The CourierRealtime article's "Sending while disconnected" sample, verbatim, so it compiles
/// and does what the article says: `send` throws `notConnected` at once while reconnecting, and
/// the outbox delivers in order at the next `open`.
private actor Outbox {
    private let live: WebSocketClient
    private var pending: [WebSocketMessage] = []
    private var flushing = false

    init(live: WebSocketClient) { self.live = live }

    /// Sends `message` now if the connection is open, else at the next `open`.
    func send(_ message: WebSocketMessage) async {
        pending.append(message)
        await flush()
    }

    /// Sends what is pending, oldest first; stops at the first failure and keeps the rest.
    func flush() async {
        guard !flushing else { return }
        flushing = true
        defer { flushing = false }
        while let next = pending.first {
            do {
                try await live.send(next)
                pending.removeFirst()
            } catch {
                return  // notConnected or the connection failed: the next `open` flushes again
            }
        }
    }

    var count: Int { pending.count }
}

@Suite("The article's outbox sample (fake transport, injected clock)")
struct OutboxSampleTests {
    @Test func sendWhileReconnectingThrowsAtOnceAndTheOutboxDeliversAtTheNextOpen() async throws {
        let transport = FakeTransport()
        let clock = TestClock(mode: .manual)
        var configuration = WebSocketClient.Configuration(url: URL(string: "ws://fake.test/live")!)
        configuration.keepalive = nil
        configuration.reconnect = ReconnectPolicy(initialDelay: .seconds(1), jitter: .none)
        let live = WebSocketClient(configuration: configuration, transport: transport, clock: clock, random: { 0.5 })
        await live.connect()
        try await eventually("open") { await live.state == .open }
        transport.connections[0].end()  // TCP loss: the client waits 1 s on the injected clock
        try await clock.waitForSleepers(count: 1)
        await #expect(throws: WebSocketError.notConnected) { try await live.send(.text("direct")) }

        let outbox = Outbox(live: live)
        let flusher = Task {
            for await state in live.states() where state == .open { await outbox.flush() }
        }
        await outbox.send(.text(#"{"op":"post","text":"hello"}"#))
        await outbox.send(.text(#"{"op":"post","text":"again"}"#))
        #expect(await outbox.count == 2)
        clock.advance(by: .seconds(1))
        try await eventually("delivered") { transport.connections.count == 2 && transport.connections[1].sent.count == 2 }
        #expect(
            transport.connections[1].sent == [.text(#"{"op":"post","text":"hello"}"#), .text(#"{"op":"post","text":"again"}"#)])
        #expect(await outbox.count == 0)
        flusher.cancel()
        await live.close()
    }
}
