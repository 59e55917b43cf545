import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
@testable import CourierRealtime

/// permessage-deflate against a second implementation of RFC 7692: the Python `websockets`
/// library (TestServer/realtime_server.py, listeners `deflate` and `deflate_tight`), which
/// negotiates its own answer, compresses what it sends and inflates what the client sends.
@Suite("permessage-deflate against websockets (second implementation)")
struct DeflateInteropTests {
    /// Compressible, incompressible and repeated messages from 0 bytes to 256 KiB.
    private var messages: [WebSocketMessage] {
        let generator = SeededRandom(seed: 7)
        let random = (0..<70_000).map { _ in UInt8(generator.next() * 256) }
        let words = ["courier", "deflate", "κόσμε", "window", "frame"]
        let text = (0..<40_000).map { words[($0 * 7 + $0 / 3) % words.count] }.joined(separator: " ")
        return [
            .text("Hello"), .text(""), .data(Data()), .text(text), .data(Data(random)), .text("Hello"),
            .text(String(repeating: "same message ", count: 20_000)), .data(Data(repeating: 0xAB, count: 256 << 10)),
            .text(text), .text("κόσμε"),
        ]
    }

    private func echo(
        _ variable: String, compression: PerMessageDeflate? = PerMessageDeflate()
    ) async throws -> (
        answer: [String], stats: [String: Any]
    ) {
        let namespace = RealtimeServers.namespace("deflate")
        var configuration = WebSocketClient.Configuration(
            url: try RealtimeServers.url(variable).appendingPathComponent("ns/\(namespace)/echo"))
        configuration.keepalive = nil
        configuration.reconnect = .never
        configuration.compression = compression
        let client = WebSocketClient(configuration: configuration)
        let received = Collected(client.messages())
        await client.connect()
        try await eventually("open") { await client.state == .open }
        let answer = await client.extensions
        let sent = messages
        for message in sent {
            do {
                try await client.send(message)
            } catch {
                let failure = await client.lastFailure
                let state = await client.state
                Issue.record("send failed: \(error); state \(state), last failure \(String(describing: failure))")
                throw error
            }
        }
        try await eventually("echoes") { received.all.count == sent.count }
        #expect(received.all == sent)
        await client.close()
        #expect(await client.state == .closed(code: .normalClosure, reason: ""))
        return (answer, try await RealtimeServers.control(namespace, "action=stats"))
    }

    @Test func echoesThroughWebsocketsWithItsDefaultAnswer() async throws {
        let (answer, stats) = try await echo("COURIER_WS_DEFLATE_URL")
        #expect(answer == ["permessage-deflate; server_max_window_bits=12; client_max_window_bits=12"])
        #expect((stats["extensions"] as? [String])?.first == answer.first)
        // Every message the client sent arrived compressed (RSV1), proven on the server's side.
        #expect(stats["compressedIn"] as? Int == messages.count, "\(stats)")
    }

    @Test func echoesWithNoContextTakeoverAndSmallWindows() async throws {
        let (answer, stats) = try await echo("COURIER_WS_DEFLATE_TIGHT_URL")
        let parameters = Set((answer.first ?? "").components(separatedBy: "; "))
        #expect(
            parameters == [
                "permessage-deflate", "server_no_context_takeover", "client_no_context_takeover",
                "server_max_window_bits=10", "client_max_window_bits=9",
            ])
        #expect(stats["compressedIn"] as? Int == messages.count, "\(stats)")
    }

    @Test func compressionTurnedOffOffersNothing() async throws {
        let (answer, stats) = try await echo("COURIER_WS_DEFLATE_URL", compression: nil)
        #expect(answer == [])
        #expect((stats["extensions"] as? [Any])?.first is NSNull)
        #expect(stats["compressedIn"] as? Int == 0)
    }
}
