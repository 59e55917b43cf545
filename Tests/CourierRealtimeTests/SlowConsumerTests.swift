import Foundation
import Testing
import Courier
@testable import CourierRealtime

/// A server that sends faster than the app takes messages: the client stops reading the socket
/// once `bufferLimit` bytes wait for the app (TCP then slows the server), instead of holding every
/// message in memory (400 × 1 MiB grew the client by 400 MiB). The proof is the bytes the server
/// managed to write while the app held back, then every message in order once the app reads.
@Suite("WebSocket back-pressure: a slow app holds the server back (in memory)", .timeLimit(.minutes(1)))
struct SlowConsumerTests {
    static let messageSize = 64 * 1024
    static let bufferLimit = 256 * 1024
    /// The pipe's "TCP window" each way.
    static let window = 64 * 1024

    /// An unmasked server frame carrying message `index`: `messageSize` bytes of `index % 256`.
    static func serverFrame(_ index: Int) -> [UInt8] {
        let size = messageSize
        return [0x82, 127] + (0..<8).map { UInt8(truncatingIfNeeded: size >> (8 * (7 - $0))) }
            + [UInt8](repeating: UInt8(index % 256), count: size)
    }

    /// Writes `count` messages from `server`; the bytes written so far are in `written`.
    static func flood(_ server: InMemoryByteStream, count: Int, written: Locked<Int>) -> Task<Void, any Error> {
        Task {
            for index in 0..<count {
                let frame = serverFrame(index)
                try await server.write(frame)
                written.withLock { $0 += frame.count }
            }
        }
    }

    /// Whether `message` is message `index` of the flood, byte for byte.
    static func isMessage(_ message: WebSocketMessage, _ index: Int) -> Bool {
        guard case .data(let data) = message else { return false }
        // One memcmp against the expected bytes (a per-byte closure is slow in a debug build).
        return data == Data(repeating: UInt8(index % 256), count: messageSize)
    }

    /// RFC 6455 connections over a pipe with a 64 KiB window (no handshake); the server end of the
    /// last one is in `server`.
    struct PipeTransport: WebSocketTransport {
        let server = Locked<InMemoryByteStream?>(nil)
        func connect(_ request: WebSocketRequest) async throws -> any WebSocketConnection {
            let (client, server) = InMemoryByteStream.pair(capacity: SlowConsumerTests.window)
            self.server.set(server)
            let connection = RFC6455Connection(
                stream: client, leftover: [], subprotocol: nil, maximumMessageSize: 1 << 20,
                closeTimeout: .milliseconds(50), sleep: { try await Task.sleep(for: $0) }, bufferLimit: request.bufferLimit)
            await connection.start()
            return connection
        }
    }

    static func client(_ transport: PipeTransport) -> WebSocketClient {
        var configuration = WebSocketClient.Configuration(url: URL(string: "ws://pipe.test/live")!)
        configuration.keepalive = nil
        configuration.reconnect = .never
        configuration.bufferLimit = bufferLimit
        return WebSocketClient(configuration: configuration, transport: transport, clock: ContinuousClock(), random: { 0.5 })
    }

    /// Connects `live` over `transport` and starts the server's flood of `count` messages; the
    /// bytes it wrote so far are in `written`.
    static func openAndFlood(
        _ live: WebSocketClient, over transport: PipeTransport, count: Int
    ) async throws -> (written: Locked<Int>, flooding: Task<Void, any Error>) {
        await live.connect()
        try await eventually("open") { await live.state == .open }
        let server = try #require(transport.server.current)
        let written = Locked(0)
        return (written, flood(server, count: count, written: written))
    }

    /// Waits until the server's writes stop (the same count twice, 50 ms apart; bounded by
    /// `eventually`), and returns the bytes written.
    static func settled(_ written: Locked<Int>) async throws -> Int {
        try await eventually("the server's writes to stop") {
            let before = written.current
            try? await Task.sleep(for: .milliseconds(50))
            return before == written.current
        }
        return written.current
    }

    @Test func aConnectionStopsReadingWhileMoreThanItsLimitWaitsForTheClient() async throws {
        let (client, server) = InMemoryByteStream.pair(capacity: Self.window)
        let connection = RFC6455Connection(
            stream: client, leftover: [], subprotocol: nil, maximumMessageSize: 1 << 20,
            sleep: { _ in try await Task.sleep(for: .seconds(3600)) }, bufferLimit: Self.bufferLimit)
        await connection.start()
        let written = Locked(0)
        let count = 200  // 12.8 MiB
        let flooding = Self.flood(server, count: count, written: written)
        try await eventually("reading to wait for the client") {
            await connection.pingWrite?.readWaitsForClient == true
        }
        let held = try await Self.settled(written)
        // The limit, one message past it, one 64 KiB read being parsed, the pipe's window, one frame.
        #expect(held <= Self.bufferLimit + 4 * Self.messageSize + 2 * Self.window, "the server wrote \(held) bytes")
        var index = 0
        for await event in connection.events {
            guard case .message(let message) = event else { break }
            #expect(Self.isMessage(message, index), "message \(index)")
            index += 1
            if index == count { break }
        }
        #expect(index == count)
        try await flooding.value
        await connection.abort(.notConnected)
    }

    @Test func aSubscriberThatStopsTakingMessagesHoldsTheServerBack() async throws {
        let transport = PipeTransport()
        let live = Self.client(transport)
        let messages = live.messages()
        let events = Collected(live.events())  // a fast subscriber beside it
        let count = 200
        let (written, flooding) = try await Self.openAndFlood(live, over: transport, count: count)
        var iterator = messages.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first.map { Self.isMessage($0, 0) } == true)
        // The app pauses here.
        let held = try await Self.settled(written)
        // Twice (the client's buffer and the connection's), each with a message past the limit,
        // plus one read being parsed, the window and a frame.
        #expect(held <= 2 * (Self.bufferLimit + Self.messageSize) + 3 * Self.messageSize + 2 * Self.window, "wrote \(held)")
        for index in 1..<count {
            let message = await iterator.next()
            #expect(message.map { Self.isMessage($0, index) } == true, "message \(index)")
        }
        try await flooding.value
        try await eventually("the fast subscriber took every message") { events.all.count == count }
        await live.close()
    }

    @Test func closeReturnsWhileASubscriberHoldsMessages() async throws {
        let transport = PipeTransport()
        let live = Self.client(transport)
        let messages = live.messages()
        let (written, flooding) = try await Self.openAndFlood(live, over: transport, count: 200)
        _ = try await Self.settled(written)
        await live.close(code: .goingAway, reason: "leaving")
        #expect(await live.state == .closed(code: .goingAway, reason: "leaving"))
        flooding.cancel()
        withExtendedLifetime(messages) {}
    }

    @Test func aReleasedSubscriberNoLongerHoldsTheServerBack() async throws {
        let transport = PipeTransport()
        let live = Self.client(transport)
        var idle: AsyncStream<WebSocketMessage>? = live.messages()  // never iterated
        let taker = Collected(live.messages())
        let count = 100
        let (written, flooding) = try await Self.openAndFlood(live, over: transport, count: count)
        let held = try await Self.settled(written)
        #expect(held < count * (Self.messageSize + 10))
        #expect(idle != nil)
        idle = nil  // the app drops the stream it never read
        try await flooding.value
        try await eventually("every message taken") { taker.all.count == count }
        #expect(taker.all.enumerated().allSatisfy { Self.isMessage($0.element, $0.offset) })
        await live.close()
    }

    @Test func aCancelledSubscriberNoLongerHoldsTheServerBack() async throws {
        let transport = PipeTransport()
        let live = Self.client(transport)
        let idle = live.messages()
        let waiting = Task {
            // Takes one message and then waits for ever.
            for await _ in idle { try? await Task.sleep(for: .seconds(3600)) }
        }
        let taker = Collected(live.messages())
        let count = 100
        let (written, flooding) = try await Self.openAndFlood(live, over: transport, count: count)
        _ = try await Self.settled(written)
        waiting.cancel()
        try await flooding.value
        try await eventually("every message taken") { taker.all.count == count }
        await live.close()
    }

    /// One 64 KiB read of permessage-deflate frames can carry dozens of 1 MiB messages of zeros
    /// (about 1 KiB each deflated): every frame of a read was inflated before the limit was
    /// checked, 62 MiB waiting for a 256 KiB limit. Now no frame is taken past the limit.
    @Test func aCompressedFloodIsInflatedOnlyWhileThereIsRoom() async throws {
        let (client, server) = InMemoryByteStream.pair(capacity: Self.window)
        let connection = RFC6455Connection(
            stream: client, leftover: [], subprotocol: nil, maximumMessageSize: 4 << 20,
            sleep: { _ in try await Task.sleep(for: .seconds(3600)) },
            compression: try DeflateCodec(DeflateParameters()),
            bufferLimit: Self.bufferLimit)
        await connection.start()
        let count = 100
        let zeros = 1 << 20
        let flooding = Task {
            guard let deflater = RawDeflater(windowBits: 15, resetsAfterEachMessage: false) else { return }
            var batch: [UInt8] = []
            for index in 0..<count {
                let payload = try deflater.compress([UInt8](repeating: 0, count: zeros))
                // RSV1 binary frame, as many per write as fit in the window (one read takes them all).
                batch += [0xC2, 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)] + payload
                if batch.count > Self.window - 2048 || index == count - 1 {
                    try await server.write(batch)
                    batch = []
                }
            }
        }
        try await eventually("reading to wait for the client") {
            await connection.pingWrite?.readWaitsForClient == true
        }
        let held = await connection.bufferedForClient
        #expect(held <= zeros + WebSocketMessage.bufferedOverhead, "\(held >> 10) KiB inflated for a 256 KiB limit")
        var taken = 0
        for await event in connection.events {
            guard case .message(.data(let data)) = event, data.count == zeros, data.last == 0 else { break }
            taken += 1
            if taken == count { break }
        }
        #expect(taken == count)
        try await flooding.value
        await connection.abort(.notConnected)
    }

    /// Empty messages weighed nothing: a flood of them never reached the limit and grew memory
    /// with every one. Each message now also counts what holding it costs.
    @Test func aFloodOfEmptyMessagesIsHeldBackToo() async throws {
        let (client, server) = InMemoryByteStream.pair(capacity: Self.window)
        let connection = RFC6455Connection(
            stream: client, leftover: [], subprotocol: nil, maximumMessageSize: 1 << 20,
            sleep: { _ in try await Task.sleep(for: .seconds(3600)) }, bufferLimit: Self.bufferLimit)
        await connection.start()
        let perWrite = 4096
        let writes = 500  // 2,048,000 empty messages
        let written = Locked(0)
        let flooding = Task {
            let chunk = [UInt8]((0..<perWrite).flatMap { _ in [UInt8(0x82), 0x00] })
            for _ in 0..<writes {
                try await server.write(chunk)
                written.withLock { $0 += perWrite }
            }
        }
        try await eventually("reading to wait for the client") {
            await connection.pingWrite?.readWaitsForClient == true
        }
        let held = try await Self.settled(written)
        #expect(held < writes * perWrite / 10, "the server wrote \(held) empty messages while nothing was taken")
        #expect(await connection.bufferedForClient <= Self.bufferLimit + WebSocketMessage.bufferedOverhead)
        flooding.cancel()
        await connection.abort(.notConnected)
    }

    @Test func theKeepaliveWaitsForAPongNotReadWhileTheAppHoldsMessages() {
        let before = PingWriteProgress(pingWaiting: false, bytesWritten: 10)
        // Reading waits for the app now, or waited during the window: the pong may be unread.
        #expect(
            WebSocketClient.pongMayBeLate(
                before: before,
                now: PingWriteProgress(pingWaiting: false, bytesWritten: 10, readWaitsForClient: true, readWaits: 1)))
        #expect(
            WebSocketClient.pongMayBeLate(
                before: before,
                now: PingWriteProgress(pingWaiting: false, bytesWritten: 10, readWaitsForClient: false, readWaits: 1)))
        // Neither reading held back nor a ping behind moving bytes: the peer is late.
        #expect(!WebSocketClient.pongMayBeLate(before: before, now: PingWriteProgress(pingWaiting: false, bytesWritten: 10)))
        #expect(!WebSocketClient.pongMayBeLate(before: before, now: PingWriteProgress(pingWaiting: true, bytesWritten: 10)))
        #expect(WebSocketClient.pongMayBeLate(before: before, now: PingWriteProgress(pingWaiting: true, bytesWritten: 11)))
    }
}

/// ``DeliveryQueue``: the queue between a producer and one consumer that the back-pressure rests on.
@Suite("Delivery queue: back-pressure, release, cancellation", .timeLimit(.minutes(1)))
struct DeliveryQueueTests {
    @Test func aProducerWaitsAboveTheLimitUntilTheConsumerTakesEnough() async throws {
        let queue = DeliveryQueue<Int>(limit: 10)
        queue.push(1, weight: 6)
        #expect(!queue.isOverLimit)
        queue.push(2, weight: 6)
        #expect(queue.isOverLimit)
        let waited = Locked(false)
        let producer = Task {
            await queue.waitForRoom()
            waited.set(true)
        }
        try await Task.sleep(for: .milliseconds(20))
        #expect(!waited.current)
        #expect(await queue.next() == 1)
        await producer.value
        #expect(waited.current)
        #expect(await queue.next() == 2)
    }

    @Test func anElementLargerThanTheLimitGoesThroughAlone() async {
        let queue = DeliveryQueue<String>(limit: 4)
        #expect(queue.push("big", weight: 100))
        #expect(queue.isOverLimit)
        #expect(await queue.next() == "big")
        #expect(!queue.isOverLimit)
    }

    @Test func finishDeliversWhatIsBufferedThenEnds() async {
        let queue = DeliveryQueue<Int>(limit: nil)
        queue.push(1, weight: 1)
        queue.push(2, weight: 1)
        queue.finish()
        #expect(!queue.push(3, weight: 1))
        var values: [Int] = []
        for await value in queue.makeStream() { values.append(value) }
        #expect(values == [1, 2])
    }

    @Test func aReleasedStreamEndsTheConsumerAndFreesAWaitingProducer() async {
        let queue = DeliveryQueue<Int>(limit: 1)
        var stream: AsyncStream<Int>? = queue.makeStream()
        queue.push(1, weight: 5)
        #expect(stream != nil)
        stream = nil
        await queue.waitForRoom()  // returns: nobody will take it
        #expect(queue.isTerminated)
        #expect(!queue.push(2, weight: 1))
    }

    @Test func aCancelledConsumerEndsTheConsumerSide() async {
        let queue = DeliveryQueue<Int>(limit: 1)
        let consumer = Task {
            for await _ in queue.makeStream() {}
        }
        consumer.cancel()
        await consumer.value
        #expect(queue.isTerminated)
        #expect(!queue.push(1, weight: 5))
    }

    @Test func stoppingHoldingBackFreesAWaitingProducer() async {
        let queue = DeliveryQueue<Int>(limit: 1)
        queue.push(1, weight: 5)
        let producer = Task { await queue.waitForRoom() }
        queue.stopHoldingBack()
        await producer.value
        #expect(!queue.isOverLimit)
        queue.holdBack()
        #expect(queue.isOverLimit)
    }

    @Test func aCancelledProducerStopsWaiting() async {
        let queue = DeliveryQueue<Int>(limit: 1)
        queue.push(1, weight: 5)
        let producer = Task { await queue.waitForRoom() }
        producer.cancel()
        await producer.value
        #expect(queue.isOverLimit)
    }
}
