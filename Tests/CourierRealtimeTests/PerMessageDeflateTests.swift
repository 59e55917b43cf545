import Foundation
import Testing
@testable import CourierRealtime

/// permessage-deflate (RFC 7692): the exact bytes of the RFC's examples, the negotiation rules of
/// §7, and the inflated-size limit, over an in-memory pipe.
@Suite("permessage-deflate (RFC 7692, in memory)")
struct PerMessageDeflateTests {
    private let hello: [UInt8] = [0xF2, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00]

    // MARK: - Compression bytes

    @Test func compressesHelloToTheBytesOfRFC7692Section7_2_3() throws {
        let shared = try #require(RawDeflater(windowBits: 15, resetsAfterEachMessage: false))
        #expect(try shared.compress(Array("Hello".utf8)) == hello)  // §7.2.3.1
        // §7.2.3.2: the second "Hello" refers back into the shared LZ77 window.
        #expect(try shared.compress(Array("Hello".utf8)) == [0xF2, 0x00, 0x11, 0x00, 0x00])
        let fresh = try #require(RawDeflater(windowBits: 15, resetsAfterEachMessage: true))
        #expect(try fresh.compress(Array("Hello".utf8)) == hello)
        #expect(try fresh.compress(Array("Hello".utf8)) == hello, "no context takeover: the window starts empty")
        // §7.2.3.6: an empty message is the single byte 0x00, also after a message in the window.
        #expect(try shared.compress([]) == [0x00])
        #expect(try shared.compress([]) == [0x00])
    }

    @Test func inflatesTheRFC7692Examples() throws {
        func inflate(_ parts: [[UInt8]], inflater: RawInflater) throws -> String {
            var output: [UInt8] = []
            for part in parts { try inflater.inflate(part, onto: &output, limit: 1000) }
            try inflater.finishMessage(onto: &output, limit: 1000)
            return String(decoding: output, as: UTF8.self)
        }
        let inflater = try #require(RawInflater(resetsAfterEachMessage: false))
        #expect(try inflate([hello], inflater: inflater) == "Hello")
        #expect(try inflate([[0xF2, 0x00, 0x11, 0x00, 0x00]], inflater: inflater) == "Hello")  // §7.2.3.2
        let other = try #require(RawInflater(resetsAfterEachMessage: false))
        #expect(try inflate([[0xF2, 0x48, 0xCD], [0xC9, 0xC9, 0x07, 0x00]], inflater: other) == "Hello")  // fragmented
        // §7.2.3.3: a stored (uncompressed) block.
        #expect(try inflate([[0x00, 0x05, 0x00, 0xFA, 0xFF, 0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x00]], inflater: other) == "Hello")
        #expect(try inflate([[0xF3, 0x48, 0xCD, 0xC9, 0xC9, 0x07, 0x00, 0x00]], inflater: other) == "Hello")  // §7.2.3.4 BFINAL
        #expect(try inflate([hello], inflater: other) == "Hello", "a final block ends the window; the next message starts fresh")
        #expect(try inflate([[0x00]], inflater: other) == "" && inflate([[0x00]], inflater: other) == "")  // §7.2.3.6
        #expect(try inflate([hello], inflater: other) == "Hello")
    }

    @Test func dataThatStopsInsideABlockIsNoMessage() throws {
        let inflater = try #require(RawInflater(resetsAfterEachMessage: false))
        var output: [UInt8] = []
        // "Hello" cut after three of its bytes: the block never ends (RFC 7692 §7.2.1).
        try inflater.inflate([0xF2, 0x48, 0xCD], onto: &output, limit: 1000)
        #expect(throws: WebSocketError.self) { try inflater.finishMessage(onto: &output, limit: 1000) }
    }

    @Test func aTruncatedCompressedMessageFailsTheConnectionWith1002() async throws {
        let (connection, server, _) = try await connect(answer: "permessage-deflate")
        try await server.write([0xC1, 0x03, 0xF2, 0x48, 0xCD])
        var events = connection.events.makeAsyncIterator()
        let first = await events.next()
        guard case .closed(let code, _, let error)? = first else {
            Issue.record("a truncated DEFLATE message was delivered: \(String(describing: first))")
            server.close()
            return
        }
        #expect(code == .protocolError)
        if case .protocolError? = error {} else { Issue.record("expected a protocol error, got \(String(describing: error))") }
        server.close()
    }

    @Test func aClientFrameCarriesRSV1AndTheCompressedPayload() async throws {
        let (connection, server, head) = try await connect(answer: "permessage-deflate")
        #expect(head.contains("Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits\r\n"))
        #expect(connection.extensions == ["permessage-deflate"])
        try await connection.send(.text("Hello"))
        let bytes = try await server.read(maximumLength: 100)
        #expect(bytes.count == 2 + 4 + hello.count)
        #expect(bytes[0] == 0xC1, "FIN, RSV1, text (RFC 7692 §7.2.3.1)")
        #expect(bytes[1] == 0x80 | UInt8(hello.count))
        let key = Array(bytes[2..<6])
        let payload: [UInt8] = bytes[6...].enumerated().map { $0.element ^ key[$0.offset % 4] }
        #expect(payload == hello)
    }

    @Test func theRFC7692FramesArriveAsMessages() async throws {
        let (connection, server, _) = try await connect(answer: "permessage-deflate; server_no_context_takeover")
        var events = connection.events.makeAsyncIterator()
        try await server.write([0xC1, 0x07] + hello)  // §7.2.3.1, one frame
        #expect(await events.next() == .message(.text("Hello")))
        try await server.write([0x41, 0x03, 0xF2, 0x48, 0xCD, 0x80, 0x04, 0xC9, 0xC9, 0x07, 0x00])  // §7.2.3.1, two fragments
        #expect(await events.next() == .message(.text("Hello")))
        try await server.write([0x81, 0x05] + Array("plain".utf8))  // an uncompressed message stays allowed
        #expect(await events.next() == .message(.text("plain")))
    }

    @Test func aCompressionBombClosesWith1009() async throws {
        let limit = 1 << 20
        let (connection, server, _) = try await connect(answer: "permessage-deflate", limit: limit)
        let bomb = try #require(RawDeflater(windowBits: 15, resetsAfterEachMessage: false))
        let payload = try bomb.compress([UInt8](repeating: 0, count: 9 << 20))
        #expect(payload.count < 16 * 1024, "9 MiB of zeros deflate to \(payload.count) bytes, far below the limit")
        try await server.write([0xC2, 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload)
        var events = connection.events.makeAsyncIterator()
        let close = try await server.read(maximumLength: 200)
        #expect(close.count >= 8 && close[0] == 0x88)
        #expect([close[6] ^ close[2], close[7] ^ close[3]] == [0x03, 0xF1], "the client's Close carries 1009")
        server.close()
        let error = WebSocketError.messageTooBig(limit: limit)
        let expected = WebSocketConnectionEvent.closed(code: .messageTooBig, reason: error.description, error: error)
        let event = await events.next()
        #expect(event == expected)
    }

    @Test func rsv1IsRefusedOnControlAndContinuationFrames() {
        for bytes: [UInt8] in [[0xC9, 0x00], [0x01, 0x01, 0x61, 0xC0, 0x01, 0x62]] {
            var parser = FrameParser(maximumPayload: 100)
            parser.allowsCompression = true
            parser.append(bytes)
            #expect(throws: WebSocketError.self) {
                while try parser.next() != nil {}
            }
        }
    }

    // MARK: - Negotiation

    @Test func acceptsTheAnswersRFC7692Allows() throws {
        let offer = PerMessageDeflate()
        #expect(try DeflateNegotiation.accept([], offer: offer) == nil)
        let plain = try #require(try DeflateNegotiation.accept(["permessage-deflate"], offer: offer))
        #expect(plain.clientMaxWindowBits == 15 && !plain.serverNoContextTakeover && !plain.clientNoContextTakeover)
        let full = try #require(
            try DeflateNegotiation.accept(
                [
                    "Permessage-Deflate; server_no_context_takeover; client_no_context_takeover; "
                        + "server_max_window_bits=10; client_max_window_bits=\"9\""
                ], offer: offer))
        #expect(full.serverNoContextTakeover && full.clientNoContextTakeover)
        #expect(full.serverMaxWindowBits == 10 && full.clientMaxWindowBits == 9)
        let asked = PerMessageDeflate(serverNoContextTakeover: true, clientNoContextTakeover: true, serverMaxWindowBits: 12)
        #expect(
            DeflateNegotiation.offerHeader(asked)
                == "permessage-deflate; server_no_context_takeover; client_no_context_takeover; server_max_window_bits=12; client_max_window_bits"
        )
        let honoured = try #require(
            try DeflateNegotiation.accept(
                ["permessage-deflate; server_no_context_takeover; server_max_window_bits=12"], offer: asked))
        #expect(honoured.clientNoContextTakeover, "the client keeps its own promise")
    }

    @Test(arguments: [
        "permessage-deflate; client_max_window_bits=16", "permessage-deflate; client_max_window_bits=7",
        "permessage-deflate; client_max_window_bits=08", "permessage-deflate; client_max_window_bits",
        "permessage-deflate; server_max_window_bits", "permessage-deflate; server_max_window_bits=abc",
        "permessage-deflate; server_no_context_takeover=1", "permessage-deflate; client_no_context_takeover=\"x\"",
        "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
        "permessage-deflate; client_max_window_bits=10; client_max_window_bits=11", "permessage-deflate; mystery",
        "permessage-deflate, permessage-deflate", "x-webkit-deflate-frame", "permessage-deflate; =1",
        "permessage-deflate; client_max_window_bits=\"10",
    ])
    func refusesAnswersRFC7692Forbids(_ answer: String) {
        #expect(throws: WebSocketError.self) { _ = try DeflateNegotiation.accept([answer], offer: PerMessageDeflate()) }
    }

    @Test func refusesAnAnswerThatIgnoresWhatTheOfferAskedFor() {
        let asked = PerMessageDeflate(serverNoContextTakeover: true, serverMaxWindowBits: 10)
        for answer in [
            "permessage-deflate; server_max_window_bits=10", "permessage-deflate; server_no_context_takeover",
            "permessage-deflate; server_no_context_takeover; server_max_window_bits=11",
        ] {
            #expect(throws: WebSocketError.self, "\(answer)") { _ = try DeflateNegotiation.accept([answer], offer: asked) }
        }
        #expect(throws: WebSocketError.self) { _ = try DeflateNegotiation.accept(["permessage-deflate"], offer: nil) }
    }

    @Test func anEightBitClientWindowSendsMessagesUncompressed() async throws {
        let (connection, server, _) = try await connect(answer: "permessage-deflate; client_max_window_bits=8")
        try await connection.send(.text("Hello"))
        let bytes = try await server.read(maximumLength: 100)
        #expect(bytes[0] == 0x81, "zlib cannot compress raw DEFLATE with a 256-byte window: sent plain (RFC 7692 §6)")
    }

    // MARK: - Pipe

    private func connect(
        answer: String, limit: Int = 1 << 20
    ) async throws -> (any WebSocketConnection, InMemoryByteStream, String) {
        let (client, server) = InMemoryByteStream.pair()
        let served = Task {
            var head: [UInt8] = []
            while !String(decoding: head, as: UTF8.self).contains("\r\n\r\n") {
                let chunk = try await server.read(maximumLength: 4096)
                if chunk.isEmpty { break }
                head += chunk
            }
            let text = String(decoding: head, as: UTF8.self)
            let key =
                text.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("sec-websocket-key:") }?
                .split(separator: ":", maxSplits: 1).last.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            let response =
                "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Accept: \(OpeningHandshake.acceptValue(for: key))\r\nSec-WebSocket-Extensions: \(answer)\r\n\r\n"
            try await server.write(Array(response.utf8))
            return text
        }
        var request = WebSocketRequest(url: URL(string: "ws://example.test/live")!, maximumMessageSize: limit)
        request.compression = PerMessageDeflate()
        let connection = try await RFC6455Transport { _ in client }.connect(request)
        return (connection, server, try await served.value)
    }
}
