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
        try await Task.sleep(for: .milliseconds(100))
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
        let bytes = await Self.read(server, count: 4104 + 11, seconds: 1)
        #expect(bytes.count == 4104)
        try await big.value
    }

    @Test func aStartedSendIsNotWithdrawn() async throws {
        let (connection, server) = await Self.connection()
        let big = Task { try await connection.send(.data(Data(repeating: 7, count: 4096))) }
        try await Task.sleep(for: .milliseconds(100))
        big.cancel()
        // Its frame is on the wire already: it is finished, and the send returns normally.
        let bytes = await Self.read(server, count: 4104)
        #expect(bytes.count == 4104)
        try await big.value
    }
}
