import Foundation
import Testing
import Courier
@testable import CourierRealtime

@Suite("RFC 6455 framing and handshake (in memory)")
struct ProtocolTests {
    /// An offered subprotocol goes into one header field: a line break in it would add fields of its
    /// own (`X-Injected` below), a comma or a space would offer others. Refused before connecting.
    @Test(
        "a subprotocol that is not a token is refused before anything is sent",
        arguments: ["chat\r\nX-Injected: yes", "chat\nX", "a, b", "v 1", "", "ü", "x;y"])
    func aSubprotocolThatIsNotATokenIsRefused(name: String) throws {
        let url = try #require(URL(string: "ws://127.0.0.1:9/chat"))
        let error = #expect(throws: WebSocketError.self) {
            try WebSocketRequest(url: url, subprotocols: ["chat", name]).validate()
        }
        guard case .negotiationFailed = error else {
            Issue.record("expected negotiationFailed, got \(String(describing: error))")
            return
        }
        try WebSocketRequest(url: url, subprotocols: ["chat", "v2.json", "graphql-transport-ws", "mqtt"]).validate()
    }

    @Test func sha1MatchesFIPSVectors() {
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        #expect(hex(SHA1.hash(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(hex(SHA1.hash([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(
            hex(SHA1.hash(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)))
                == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
    }

    @Test func acceptValueMatchesRFC6455Example() {
        // RFC 6455 §1.3
        #expect(OpeningHandshake.acceptValue(for: "dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=")
    }

    @Test func utf8ValidationFollowsRFC3629() {
        #expect(UTF8Validation.isValid(Array("κόσμε €𐍈".utf8)))
        #expect(UTF8Validation.isValid([0xF4, 0x8F, 0xBF, 0xBF]))
        for bad: [UInt8] in [
            [0xC0, 0x80], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xE2, 0x82], [0xFF],
        ] {
            #expect(!UTF8Validation.isValid(bad), "\(bad)")
        }
    }

    @Test func encoderUsesShortestLengthAndMasks() throws {
        let key: [UInt8] = [1, 2, 3, 4]
        for (count, headerLength, marker) in [(0, 6, 0), (125, 6, 125), (126, 8, 126), (65535, 8, 126), (65536, 14, 127)] {
            let bytes = FrameEncoder.encode(Frame(opcode: .binary, payload: [UInt8](repeating: 7, count: count)), maskingKey: key)
            #expect(bytes.count == headerLength + count)
            #expect(bytes[1] & 0x80 != 0, "client frames are masked (RFC 6455 §5.3)")
            #expect(Int(bytes[1] & 0x7F) == marker)
            if count > 0 { #expect(bytes[headerLength] == 7 ^ 1) }
        }
        let keys = Set((0..<200).map { _ in FrameEncoder.freshMaskingKey() })
        #expect(keys.count >= 199, "a fresh key per frame")
    }

    @Test func aControlFrameIsLegalUnderAMessageLimitSmallerThan125() throws {
        var parser = FrameParser(maximumPayload: 16)
        parser.append([0x89, 0x20] + [UInt8](repeating: 0x61, count: 32))
        #expect(try parser.next()?.opcode == .ping)
        parser.append([0x82, 0x20] + [UInt8](repeating: 0x61, count: 32))
        #expect(throws: WebSocketError.messageTooBig(limit: 16)) { try parser.next() }
    }

    @Test func parserRejectsWhatAClientMustNotAccept() throws {
        func parse(_ bytes: [UInt8], limit: Int = 1 << 20) -> Result<Frame?, WebSocketError> {
            var parser = FrameParser(maximumPayload: limit)
            parser.append(bytes)
            return Result { try parser.next() }.mapError { ($0 as? WebSocketError) ?? .notConnected }
        }
        #expect(try parse([0x81, 0x02, 0x68, 0x69]).get() == Frame(opcode: .text, payload: Array("hi".utf8)))
        #expect(try parse([0x81, 0x02, 0x68]).get() == nil, "incomplete frame waits for more bytes")
        for bytes: [UInt8] in [
            [0xC1, 0x00], [0x83, 0x00], [0x8B, 0x00], [0x81, 0x80, 0, 0, 0, 0], [0x09, 0x00], [0x89, 0x7E, 0x00, 0x7E],
        ] {
            guard case .failure(.protocolError) = parse(bytes) else {
                Issue.record("accepted \(bytes)")
                continue
            }
        }
        guard case .failure(.messageTooBig(limit: 10)) = parse([0x82, 0x0B], limit: 10) else {
            Issue.record("no 1009")
            return
        }
    }

    @Test("a 64-bit frame length near Int.max waits for its bytes under any limit, Int.max and negative included")
    func parserLengthArithmeticCannotOverflow() throws {
        // 10 header bytes announcing 2^63 - 1 payload bytes: with no limit of its own (Int.max) the
        // parser once added the header length to it and trapped.
        let huge: [UInt8] = [0x82, 0x7F, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        var unlimited = FrameParser(maximumPayload: .max)
        unlimited.append(huge)
        #expect(try unlimited.next() == nil, "waits for the payload")
        var negative = FrameParser(maximumPayload: -1)
        negative.append([0x82, 0x01, 0x00])
        #expect(throws: WebSocketError.messageTooBig(limit: 0)) { try negative.next() }
        var empty = FrameParser(maximumPayload: -1)
        empty.append([0x82, 0x00])
        #expect(try empty.next() == Frame(opcode: .binary, payload: []))
    }

    @Test func assemblerReassemblesAndValidatesSplitCodePoints() throws {
        var assembler = MessageAssembler(maximumMessageSize: 100)
        #expect(try assembler.append(Frame(fin: false, opcode: .text, payload: [0xE2, 0x82])) == nil)
        #expect(try assembler.append(Frame(fin: true, opcode: .continuation, payload: [0xAC])) == .text("€"))
        #expect(throws: WebSocketError.invalidUTF8) { try assembler.append(Frame(opcode: .text, payload: [0xED, 0xA0, 0x80])) }
        var fresh = MessageAssembler(maximumMessageSize: 4)
        #expect(throws: WebSocketError.self) { try fresh.append(Frame(opcode: .continuation, payload: [1])) }
        _ = try fresh.append(Frame(fin: false, opcode: .binary, payload: [1, 2, 3]))
        #expect(throws: WebSocketError.messageTooBig(limit: 4)) {
            try fresh.append(Frame(fin: true, opcode: .continuation, payload: [4, 5]))
        }
    }

    // MARK: - Handshake and connection over an in-memory pipe

    /// Reads the client's request head and answers with `response(key)`.
    private func serveHandshake(
        _ server: InMemoryByteStream, trailing: [UInt8], response: @escaping @Sendable (String) -> String
    ) -> Task<String, any Error> {
        Task {
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
            try await server.write(Array(response(key).utf8) + trailing)
            return text
        }
    }

    private func accept(_ key: String, extra: String = "") -> String {
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: \(OpeningHandshake.acceptValue(for: key))\r\n\(extra)\r\n"
    }

    private func connect(
        _ response: @escaping @Sendable (String) -> String, subprotocols: [String] = [], trailing: [UInt8] = []
    )
        async throws -> (any WebSocketConnection, InMemoryByteStream, String)
    {
        let (client, server) = InMemoryByteStream.pair()
        let served = serveHandshake(server, trailing: trailing, response: response)
        let transport = RFC6455Transport { _ in client }
        let connection = try await transport.connect(
            WebSocketRequest(
                url: URL(string: "ws://example.test:8080/live?x=1")!,
                headers: [("Authorization", "Bearer t")], subprotocols: subprotocols))
        return (connection, server, try await served.value)
    }

    /// A cancelled attempt (the client's `close()` or `enterBackground()`) while the server has not
    /// answered the upgrade ends at once and closes the stream, not at the connect timeout: the
    /// next attempt waits behind it until it ends.
    @Test func cancellingAnUnansweredHandshakeEndsItAtOnce() async throws {
        let (client, server) = InMemoryByteStream.pair()
        let transport = RFC6455Transport { _ in client }
        let outcome = Locked<(any Error)??>(nil)
        let attempt = Task {
            do {
                _ = try await transport.connect(
                    WebSocketRequest(url: URL(string: "ws://example.test/live")!, connectTimeout: .seconds(600)))
                outcome.set(.some(nil))
            } catch {
                outcome.set(.some(error))
            }
        }
        _ = try await server.read(maximumLength: 4096)  // the upgrade request; never answered
        attempt.cancel()
        let clock = ContinuousClock()
        let start = clock.now
        while outcome.current == nil, clock.now - start < .seconds(10) { try await Task.sleep(for: .milliseconds(5)) }
        let ended = try #require(outcome.current, "the cancelled handshake still waits (connect timeout 600 s)")
        #expect(ended is CancellationError)
        #expect(try await server.read(maximumLength: 4096) == [])  // the client side was closed
    }

    @Test func handshakeSendsRFC6455HeadersAndChecksAccept() async throws {
        let (connection, _, head) = try await connect { self.accept($0) }
        #expect(head.hasPrefix("GET /live?x=1 HTTP/1.1\r\n"))
        #expect(head.contains("Host: example.test:8080\r\n"))
        #expect(head.contains("Upgrade: websocket\r\n") && head.contains("Connection: Upgrade\r\n"))
        #expect(head.contains("Sec-WebSocket-Version: 13\r\n") && head.contains("Authorization: Bearer t\r\n"))
        #expect(!head.contains("Sec-WebSocket-Extensions") && !head.contains("Sec-WebSocket-Protocol"))
        #expect(connection.subprotocol == nil)
    }

    @Test func handshakeRefusesWrongAcceptAndUnaskedNegotiation() async throws {
        let wrongAccept: @Sendable (String) -> String = { _ in
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: bm9wZQ==\r\n\r\n"
        }
        for response in [
            wrongAccept,
            { self.accept($0, extra: "Sec-WebSocket-Extensions: permessage-deflate\r\n") },
            { self.accept($0, extra: "Sec-WebSocket-Protocol: chat\r\n") },
        ] as [@Sendable (String) -> String] {
            await #expect(throws: WebSocketError.self) { _ = try await self.connect(response) }
        }
        await #expect(throws: WebSocketError.handshakeRejected(status: 401)) {
            _ = try await self.connect { _ in "HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n" }
        }
        let (chat, _, head) = try await connect(
            { self.accept($0, extra: "Sec-WebSocket-Protocol: chat\r\n") }, subprotocols: ["chat", "v2"])
        #expect(chat.subprotocol == "chat")
        #expect(head.contains("Sec-WebSocket-Protocol: chat, v2\r\n"))
    }

    @Test func answersPingsDeliversFramesSentWithTheHandshakeAndReports1006OnTCPLoss() async throws {
        let (connection, server, _) = try await connect({ self.accept($0) }, trailing: [0x81, 0x02, 0x68, 0x69])
        var events = connection.events.makeAsyncIterator()
        #expect(await events.next() == .message(.text("hi")))
        try await server.write([0x89, 0x03, 0x61, 0x62, 0x63])  // ping "abc"
        let pong = try await server.read(maximumLength: 100)
        #expect(pong.count == 9 && pong[0] == 0x8A && pong[1] == 0x83)
        let unmasked = (0..<3).map { pong[6 + $0] ^ pong[2 + $0] }
        #expect(unmasked == Array("abc".utf8))
        server.close()
        guard case .closed(code: .abnormalClosure, _, _) = await events.next() else {
            Issue.record("expected 1006")
            return
        }
    }

    @Test func closeHandshakeEchoesTheServerCode() async throws {
        let (connection, server, _) = try await connect { self.accept($0) }
        try await server.write([0x88, 0x05, 0x03, 0xE9] + Array("bye".utf8))  // 1001 "bye"
        let reply = try await server.read(maximumLength: 100)
        #expect(reply.count == 8 && reply[0] == 0x88 && reply[1] == 0x82)
        #expect([reply[6] ^ reply[2], reply[7] ^ reply[3]] == [0x03, 0xE9])
        var events = connection.events.makeAsyncIterator()
        #expect(await events.next() == .closed(code: .goingAway, reason: "bye", error: nil))
    }
}

@Suite("Opening handshake answers that will not change on retry")
struct HandshakeClassificationTests {
    private let key = "dGhlIHNhbXBsZSBub25jZQ=="

    private func head(_ status: String, _ fields: [String] = []) -> [UInt8] {
        Array(([status] + fields).joined(separator: "\r\n").utf8)
    }

    private var upgrade: [String] {
        ["Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Accept: \(OpeningHandshake.acceptValue(for: key))"]
    }

    private func outcome(_ head: [UInt8], offered: [String] = [], requires: Bool = false) -> Result<String?, WebSocketError> {
        Result {
            try OpeningHandshake.validate(head: head, key: key, offered: offered, requiresSubprotocol: requires)
        }.mapError { ($0 as? WebSocketError) ?? .notConnected }
    }

    @Test(arguments: [300, 301, 302, 303, 307, 308])
    func redirectsAreTypedAndTerminal(_ status: Int) {
        let result = outcome(head("HTTP/1.1 \(status) Moved", ["Location: ws://elsewhere.test/live", "Content-Length: 0"]))
        #expect(result == .failure(.handshakeRedirected(status: status, location: "ws://elsewhere.test/live")))
        #expect(WebSocketClient.isTerminal(.handshakeRedirected(status: status, location: nil)))
    }

    @Test func negotiationTheClientCannotUseIsTerminal() {
        let cases: [(fields: [String], offered: [String], requires: Bool)] = [
            (["Sec-WebSocket-Protocol: chat"], [], false),  // none offered
            (["Sec-WebSocket-Protocol: v3"], ["v1", "v2"], false),  // not offered
            (["Sec-WebSocket-Protocol: v1", "Sec-WebSocket-Protocol: v2"], ["v1", "v2"], false),  // two selected
            ([], ["v1"], true),  // none selected while one is required
            (["Sec-WebSocket-Extensions: permessage-deflate"], [], false),  // extension not offered
        ]
        for item in cases {
            let result = outcome(
                head("HTTP/1.1 101 Switching Protocols", upgrade + item.fields), offered: item.offered, requires: item.requires)
            guard case .failure(let error) = result, case .negotiationFailed = error else {
                Issue.record("\(item): \(result)")
                continue
            }
            #expect(WebSocketClient.isTerminal(error))
        }
        #expect(outcome(head("HTTP/1.1 101 Switching Protocols", upgrade), offered: ["v1"]) == .success(nil))
        #expect(
            outcome(head("HTTP/1.1 101 Switching Protocols", upgrade + ["Sec-WebSocket-Protocol: v2"]), offered: ["v1", "v2"])
                == .success("v2"))
    }

    @Test func statusesThatMayChangeAreRetried() {
        for status in [408, 429, 500, 502, 503, 504] {
            #expect(!WebSocketClient.isTerminal(.handshakeRejected(status: status)), "\(status)")
        }
        for status in [400, 403, 404, 410, 426] {
            #expect(WebSocketClient.isTerminal(.handshakeRejected(status: status)), "\(status)")
        }
        #expect(!WebSocketClient.isTerminal(.invalidHandshake("wrong accept")))
        #expect(!WebSocketClient.isTerminal(.writeTimeout(seconds: 30)))
    }
}
