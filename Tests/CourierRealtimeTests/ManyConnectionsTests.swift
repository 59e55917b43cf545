import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
@testable import CourierRealtime

/// Hundreds of WebSocket connections over libcurl in one process, each open and echoing.
///
/// A quiet connection's read used to wait in `poll(2)` on a dispatch thread of its own, and
/// libdispatch's overcommit threads are capped (255 on Linux): 240 connections worked, 300 hung
/// the whole process. A read now waits on a dispatch read source, holding no thread.
@Suite("Many WebSocket connections over libcurl at once")
struct ManyConnectionsTests {
    @Test("300 connections open, each echoes its own message, and all close", .timeLimit(.minutes(2)))
    func threeHundredConnectionsEchoAtOnce() async throws {
        let namespace = RealtimeServers.namespace("many")
        let url = try RealtimeServers.url("COURIER_WS_URL").appendingPathComponent("ns/\(namespace)/echo")
        let clients = (0..<300).map { _ in
            var configuration = WebSocketClient.Configuration(url: url)
            configuration.keepalive = nil
            configuration.reconnect = .never
            return WebSocketClient(
                configuration: configuration, transport: RFC6455Transport.curl(), clock: ContinuousClock(), random: { 0.5 })
        }
        let collected = clients.map { Collected($0.messages()) }
        for client in clients { await client.connect() }
        for (index, client) in clients.enumerated() {
            try await eventually("connection \(index) open") { await client.state == .open }
            try await client.send(text: "hello \(index)")
        }
        for (index, messages) in collected.enumerated() {
            try await eventually("echo \(index)") { messages.all.count == 1 }
            #expect(messages.all == [.text("hello \(index)")])
        }
        for client in clients { await client.close() }
        for client in clients { #expect(await client.state == .closed(code: .normalClosure, reason: "")) }
    }
}
