import Foundation
import Testing
import Courier
import CourierTesting
@testable import CourierRealtime

/// RFC6455Connection's writer and closing handshake over an in-memory pipe, with the server
/// side scripted byte by byte: pong order, Close precedence, a peer that stops reading, 1009.
@Suite("RFC 6455 connection: writes, control frames and closing (in memory)", .timeLimit(.minutes(1)))
struct ConnectionLifecycleTests {
    /// A connection already past its handshake; its timers run on `clock`.
    private func open(
        capacity: Int? = nil, clock: TestClock = TestClock(mode: .manual), maximumMessageSize: Int = 1 << 20,
        writeTimeout: Duration = .seconds(30)
    ) async -> (RFC6455Connection, InMemoryByteStream, ServerFrameReader) {
        let (client, server) = InMemoryByteStream.pair(capacity: capacity)
        let connection = RFC6455Connection(
            stream: client, leftover: [], subprotocol: nil, maximumMessageSize: maximumMessageSize,
            closeTimeout: .seconds(5), writeTimeout: writeTimeout, sleep: ClientClock(clock).sleep)
        await connection.start()
        return (connection, server, ServerFrameReader(server))
    }

    private func closedEvent(_ connection: RFC6455Connection) async -> WebSocketConnectionEvent? {
        for await event in connection.events {
            if case .closed = event { return event }
        }
        return nil
    }

    @Test func pongsAnswerAPingStormInOrder() async throws {
        let (connection, server, reader) = await open()
        let count = 2000
        var storm: [UInt8] = []
        for index in 0..<count { storm += serverFrame(opcode: 0x9, payload: Array("ping \(index)".utf8)) }
        try await server.write(storm)  // every ping arrives in one read
        var pongs: [String] = []
        while pongs.count < count {
            let frame = try await reader.next()
            #expect(frame.opcode == 0xA)
            pongs.append(String(decoding: frame.payload, as: UTF8.self))
        }
        #expect(pongs == (0..<count).map { "ping \($0)" })
        server.close()
        #expect(await closedEvent(connection)?.isAbnormal == true)
    }

    /// A peer that sends pings and never reads: the pongs waiting stay within 256 KiB, the last
    /// answering the last ping, not one 106-byte pong per ping (2 MB here).
    @Test func aPingFloodFromAPeerThatDoesNotReadQueuesBoundedPongs() async throws {
        let (connection, server, reader) = await open(capacity: 64)
        let count = 20_000
        var flood: [UInt8] = []
        for index in 0..<count {
            let label = Array("p\(index)".utf8)
            flood += serverFrame(opcode: 0x9, payload: label + [UInt8](repeating: 0x2E, count: 100 - label.count))
        }
        flood += serverFrame(opcode: 0x1, payload: Array("after".utf8))
        try await server.write(flood)
        // Frames are handled in order: once the text message arrives, every ping was handled.
        for await event in connection.events {
            if case .message(.text("after")) = event { break }
        }
        var pongs = 0
        while true {
            let frame = try await reader.next()
            #expect(frame.opcode == 0xA)
            pongs += 1
            if frame.payload.starts(with: Array("p\(count - 1).".utf8)) { break }
        }
        #expect(pongs <= 256 * 1024 / 106 + 2, "\(pongs) pongs were queued for \(count) pings")
        server.close()
    }

    /// 1005, 1006 and 1015 name what happened locally and are never sent (RFC 6455 §7.4.1).
    @Test(arguments: [UInt16(1005), 1006, 1015, 999, 5000])
    func aCloseWithACodeNotValidOnTheWireSends1000(_ code: UInt16) async throws {
        let (connection, server, reader) = await open()
        let closing = Task { await connection.close(code: WebSocketCloseCode(rawValue: code), reason: "bye") }
        let frame = try await reader.next()
        #expect(frame.opcode == 0x8)
        #expect(Array(frame.payload.prefix(2)) == [0x03, 0xE8])
        try await server.write(serverClose(1000, ""))
        await closing.value
        server.close()
    }

    @Test func twoCloseFramesInOneReadAreAnsweredOnceWithTheFirstCode() async throws {
        let (connection, server, reader) = await open()
        try await server.write(serverClose(1001, "first") + serverClose(1000, "second"))
        let reply = try await reader.next()
        #expect(reply.opcode == 0x8)
        #expect(Array(reply.payload.prefix(2)) == [0x03, 0xE9])
        #expect(await closedEvent(connection) == .closed(code: .goingAway, reason: "first", error: nil))
        // Nothing after the one reply: the client closed its end.
        #expect(try await reader.remainingBytes() == 0)
    }

    /// §7.1.5: the server's Close followed at once by the end of TCP still reports its code.
    @Test(arguments: [1008, 1000, 4000])
    func closeThenEndOfStreamReportsTheReceivedCode(_ code: Int) async throws {
        for _ in 0..<50 {
            let (connection, server, _) = await open()
            try await server.write(serverClose(UInt16(code), "go away"))
            server.close()
            let event = await closedEvent(connection)
            #expect(event == .closed(code: WebSocketCloseCode(rawValue: UInt16(code)), reason: "go away", error: nil))
        }
    }

    /// The server stops reading: the send stays pending until the write deadline, then the
    /// connection fails with 1006 and `writeTimeout` while a ping and `close()` never wait behind it.
    @Test func aPeerThatStopsReadingFailsAtTheWriteDeadline() async throws {
        let clock = TestClock(mode: .manual)
        let (connection, _, _) = await open(capacity: 4096, clock: clock, writeTimeout: .seconds(10))
        let sending = Task { try await connection.send(.data(Data(count: 256 * 1024))) }
        try await clock.waitForSleepers(count: 1)  // the write deadline of the stuck slice
        // A ping is queued, not written: it returns while the data write is stuck.
        try await connection.sendPing {}
        clock.advance(by: .seconds(10))
        await #expect(throws: WebSocketError.self) { try await sending.value }
        let event = await closedEvent(connection)
        #expect(
            event
                == .closed(
                    code: .abnormalClosure, reason: WebSocketError.writeTimeout(seconds: 10).description,
                    error: .writeTimeout(seconds: 10)))
        await #expect(throws: WebSocketError.notConnected) { try await connection.send(.text("late")) }
    }

    /// The send whose write missed the deadline throws the reason, ``WebSocketError/writeTimeout(seconds:)``,
    /// not ``WebSocketError/notConnected`` (which says the message was refused before any of it
    /// went out); a message queued behind it was never started and gets `notConnected`.
    @Test func theStuckSendThrowsWriteTimeout() async throws {
        let clock = TestClock(mode: .manual)
        let (connection, _, _) = await open(capacity: 4096, clock: clock, writeTimeout: .seconds(10))
        let stuck = Task { try await connection.send(.data(Data(count: 256 * 1024))) }
        try await clock.waitForSleepers(count: 1)  // the write deadline of the stuck slice
        let queued = Task { try await connection.send(.text("behind")) }
        clock.advance(by: .seconds(10))
        await #expect(throws: WebSocketError.writeTimeout(seconds: 10)) { try await stuck.value }
        await #expect(throws: WebSocketError.notConnected) { try await queued.value }
    }

    /// What the keepalive reads: a ping queued behind a frame being written waits, the bytes
    /// written grow while the peer reads, and the ping is no longer waiting once written.
    @Test func aPingBehindAFrameReportsItsWaitAndTheWritesProgress() async throws {
        let (connection, server, _) = await open(capacity: 4096)
        let size = 256 * 1024
        let sending = Task { try await connection.send(.data(Data(count: size))) }
        var read = try await server.read(maximumLength: 4096).count  // the data frame has started
        try await connection.sendPing {}
        let queued = try #require(await connection.pingWrite)
        #expect(queued.pingWaiting)
        while read < size / 2 { read += try await server.read(maximumLength: 4096).count }
        let moving = try #require(await connection.pingWrite)
        #expect(moving.pingWaiting)
        #expect(moving.bytesWritten > queued.bytesWritten)
        while read < size + 14 + 13 { read += try await server.read(maximumLength: 4096).count }  // frame + ping
        try await sending.value
        for _ in 0..<1000 where await connection.pingWrite?.pingWaiting == true { await Task.yield() }
        #expect(await connection.pingWrite?.pingWaiting == false)
    }

    @Test func closeReturnsAtTheCloseTimeoutWhileAWriteIsStuck() async throws {
        let clock = TestClock(mode: .manual)
        let (connection, _, _) = await open(capacity: 4096, clock: clock, writeTimeout: .seconds(60))
        let sending = Task { try await connection.send(.data(Data(count: 256 * 1024))) }
        try await clock.waitForSleepers(count: 1)
        let closing = Task { await connection.close(code: .normalClosure, reason: "bye") }
        try await clock.waitForSleeper(for: .seconds(5))  // the close timeout, next to the write deadline
        clock.advance(by: .seconds(5))
        await closing.value
        await #expect(throws: WebSocketError.self) { try await sending.value }
        #expect(await closedEvent(connection) == .closed(code: .normalClosure, reason: "bye", error: nil))
    }

    /// A frame over the limit: the client's 1009 Close reaches the server although the server is
    /// still sending the rest of the message, and the app sees 1009.
    @Test func tooBigMessageSends1009AndReadsOnUntilTheServerCloses() async throws {
        let (connection, server, reader) = await open(maximumMessageSize: 1024)
        let big = serverFrame(opcode: 0x2, payload: [UInt8](repeating: 7, count: 200_000))
        let writing = Task { try await server.write(big) }
        let close = try await reader.next()
        #expect(close.opcode == 0x8)
        #expect(Array(close.payload.prefix(2)) == [0x03, 0xF1])  // 1009
        try await writing.value  // the client kept reading (discarding) the rest
        try await server.write(serverClose(1009, ""))
        server.close()
        let event = await closedEvent(connection)
        guard case .closed(code: .messageTooBig, _, error: .messageTooBig(limit: 1024)) = event else {
            Issue.record("expected 1009, got \(String(describing: event))")
            return
        }
    }

    @Test func sendAfterTheServersCloseThrowsNotConnected() async throws {
        let (connection, server, reader) = await open()
        try await server.write(serverClose(1000, ""))
        _ = try await reader.next()
        await #expect(throws: WebSocketError.notConnected) { try await connection.send(.text("late")) }
    }
}

extension WebSocketConnectionEvent {
    var isAbnormal: Bool {
        if case .closed(code: .abnormalClosure, _, _) = self { return true }
        return false
    }
}

/// An unmasked server frame (RFC 6455 §5.2).
func serverFrame(opcode: UInt8, payload: [UInt8], fin: Bool = true) -> [UInt8] {
    var bytes: [UInt8] = [(fin ? 0x80 : 0) | opcode]
    switch payload.count {
    case 0...125: bytes.append(UInt8(payload.count))
    case 126...0xFFFF: bytes += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    default:
        bytes.append(127)
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: payload.count >> shift)) }
    }
    return bytes + payload
}

/// A server Close frame with `code` and `reason`.
func serverClose(_ code: UInt16, _ reason: String) -> [UInt8] {
    serverFrame(opcode: 0x8, payload: [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
}

/// Reads the client's masked frames on the server end of a pipe.
final class ServerFrameReader: Sendable {
    struct Frame: Sendable {
        var opcode: UInt8
        var payload: [UInt8]
    }

    private let stream: InMemoryByteStream
    private let buffer = Locked([UInt8]())

    init(_ stream: InMemoryByteStream) { self.stream = stream }

    /// The next complete frame, unmasked.
    ///
    /// - Throws: `EndOfStream` when the client closed before a whole frame arrived.
    func next() async throws -> Frame {
        while true {
            if let frame = parse() { return frame }
            let chunk = try await stream.read(maximumLength: 64 * 1024)
            guard !chunk.isEmpty else { throw EndOfStream() }
            buffer.withLock { $0 += chunk }
        }
    }

    /// Reads to the end of the stream; returns how many bytes came after the frames read so far.
    func remainingBytes() async throws -> Int {
        var total = buffer.current.count
        while true {
            let chunk = try await stream.read(maximumLength: 64 * 1024)
            if chunk.isEmpty { return total }
            total += chunk.count
        }
    }

    struct EndOfStream: Error {}

    private func parse() -> Frame? {
        buffer.withLock { bytes -> Frame? in
            guard bytes.count >= 2 else { return nil }
            var length = Int(bytes[1] & 0x7F)
            var offset = 2
            if length == 126 {
                guard bytes.count >= 4 else { return nil }
                length = Int(bytes[2]) << 8 | Int(bytes[3])
                offset = 4
            } else if length == 127 {
                guard bytes.count >= 10 else { return nil }
                length = (2..<10).reduce(0) { $0 << 8 | Int(bytes[$1]) }
                offset = 10
            }
            guard bytes.count >= offset + 4 + length else { return nil }
            let key = Array(bytes[offset..<(offset + 4)])
            let payload = (0..<length).map { bytes[offset + 4 + $0] ^ key[$0 & 3] }
            let frame = Frame(opcode: bytes[0] & 0x0F, payload: payload)
            bytes.removeFirst(offset + 4 + length)
            return frame
        }
    }
}
