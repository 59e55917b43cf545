import Foundation
import Testing
import Courier
@testable import CourierRealtime

/// A `send` cancelled while its message waits behind a write the peer does not read: it is
/// withdrawn and throws `CancellationError` at once (it used to wait for the write deadline, 30 s
/// by default, and then fail with the whole connection).
@Suite("WebSocket send cancellation", .timeLimit(.minutes(1)))
struct SendCancellationTests {
    /// A connection over a pipe whose peer buffers 1 KiB and reads only when the test says.
    static func connection() async -> (RFC6455Connection, InMemoryByteStream) {
        let (client, server) = InMemoryByteStream.pair(capacity: 1024)
        let connection = RFC6455Connection(
            stream: client, leftover: [], subprotocol: nil, maximumMessageSize: 1 << 20,
            sleep: { _ in try await Task.sleep(for: .seconds(3600)) })
        await connection.start()
        return (connection, server)
    }

    /// Reads from `server` until `count` bytes came or `seconds` passed; returns them.
    static func read(_ server: InMemoryByteStream, count: Int, seconds: Double = 2) async -> [UInt8] {
        let reading = Task {
            var bytes: [UInt8] = []
            while bytes.count < count {
                let chunk = (try? await server.read(maximumLength: count - bytes.count)) ?? []
                if chunk.isEmpty { break }
                bytes += chunk
            }
            return bytes
        }
        let timer = Task {
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            server.close()
        }
        let bytes = await reading.value
        timer.cancel()
        return bytes
    }

    @Test func aSendCancelledBeforeItsFirstByteIsWithdrawnAndNeverWritten() async throws {
        let (connection, server) = await Self.connection()
        // 4 KiB cannot go into the peer's 1 KiB: this write is stuck.
        let big = Task { try await connection.send(.data(Data(repeating: 7, count: 4096))) }
        // The peer's first read proves the big message started; it is still stuck after it.
        let first = try await server.read(maximumLength: 1024)
        let small = Task { () -> (any Error)? in
            do {
                try await connection.send(.text("never"))
                return nil
            } catch { return error }
        }
        try await Task.sleep(for: .milliseconds(100))
        small.cancel()
        let error = await small.value
        #expect(error is CancellationError, "\(String(describing: error))")
        // The peer reads again: the big message (4 header + 4 mask + 4096) arrives and nothing after it.
        let rest = await Self.read(server, count: 4104 - first.count, seconds: 30)
        #expect(first.count + rest.count == 4104)
        try await big.value
        let extra = await Self.read(server, count: 11, seconds: 0.3)
        #expect(extra.isEmpty, "the withdrawn message was written: \(extra.count) bytes")
    }

    @Test func aStartedSendIsNotWithdrawn() async throws {
        let (connection, server) = await Self.connection()
        let big = Task { try await connection.send(.data(Data(repeating: 7, count: 4096))) }
        let first = try await server.read(maximumLength: 1024)  // its frame is on the wire
        big.cancel()
        // It is finished, and the send returns normally.
        let rest = await Self.read(server, count: 4104 - first.count, seconds: 30)
        #expect(first.count + rest.count == 4104)
        try await big.value
    }

    /// Opens one RFC 6455 connection over a pipe whose peer buffers 1 KiB (no handshake).
    struct PipeTransport: WebSocketTransport {
        let server = Locked<InMemoryByteStream?>(nil)
        func connect(_ request: WebSocketRequest) async throws -> any WebSocketConnection {
            let (client, server) = InMemoryByteStream.pair(capacity: 1024)
            self.server.set(server)
            let connection = RFC6455Connection(
                stream: client, leftover: [], subprotocol: nil, maximumMessageSize: 1 << 20,
                sleep: { _ in try await Task.sleep(for: .seconds(3600)) })
            await connection.start()
            return connection
        }
    }

    /// The opcodes and payloads of the client's (masked) frames in `bytes`.
    static func frames(_ bytes: [UInt8]) -> [(opcode: UInt8, payload: [UInt8])] {
        var frames: [(UInt8, [UInt8])] = []
        var index = 0
        while index + 2 <= bytes.count {
            var length = Int(bytes[index + 1] & 0x7F)
            var header = 2
            if length == 126 {
                length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
                header = 4
            } else if length == 127 {
                length = (0..<8).reduce(0) { $0 << 8 | Int(bytes[index + 2 + $1]) }
                header = 10
            }
            let key = Array(bytes[(index + header)..<(index + header + 4)])
            let start = index + header + 4
            guard start + length <= bytes.count else { break }
            let payload = (0..<length).map { bytes[start + $0] ^ key[$0 % 4] }
            frames.append((bytes[index] & 0x0F, payload))
            index = start + length
        }
        return frames
    }

    @Test func aSubscribeFromACancelledTaskStillReachesTheServer() async throws {
        let transport = PipeTransport()
        var configuration = WebSocketClient.Configuration(url: URL(string: "ws://pipe.test/live")!)
        configuration.keepalive = nil
        configuration.reconnect = .never
        let live = WebSocketClient(configuration: configuration, transport: transport, clock: ContinuousClock(), random: { 0.5 })
        await live.connect()
        try await eventually("open") { await live.state == .open }
        let server = try #require(transport.server.current)
        // The app's 4 KiB message fills the peer's buffer: the subscribe waits behind it.
        let big = Task { try await live.send(data: Data(repeating: 7, count: 4096)) }
        // The peer's first read proves the big message started (a fixed 100 ms was not always
        // enough under the parallel suite's load: the subscribe then went first).
        let first = try await server.read(maximumLength: 1024)
        let subscribing = Task { await live.subscribe(Subscription(id: "a", subscribe: .text("sub-a"))) }
        try await Task.sleep(for: .milliseconds(100))
        subscribing.cancel()
        // The registry holds it, so the server must get it on this connection.
        let rest = await Self.read(server, count: 4104 + 11 - first.count, seconds: 30)
        let sent = Self.frames(first + rest)
        #expect(sent.map(\.opcode) == [0x2, 0x1])
        #expect(sent.last.map { String(decoding: $0.payload, as: UTF8.self) } == "sub-a")
        try await big.value
        await subscribing.value
        #expect(await live.subscriptions.map(\.id) == ["a"])
    }
}
