import Courier
import Foundation

/// Courier's own RFC 6455 client connection over any ``ByteStream``: frames and masks what it
/// sends, parses and validates what it reads, answers pings with pongs in order (§5.5.2–5.5.3),
/// runs the closing handshake (§7.1.2, §5.5.1), and fails the connection with 1002, 1007 or 1009
/// when the server breaks the protocol (§7.1.7). A connection lost without a Close frame reports 1006.
///
/// Writing: one writer drains an outgoing queue (``OutgoingQueue``: control frames ahead of data
/// frames not yet started, each lane in order), so `send`, `sendPing` and `close` never wait
/// behind each other's bytes, and every write slice has a deadline (`writeTimeout`): a peer that
/// stops reading fails the connection with ``WebSocketError/writeTimeout(seconds:)`` (1006).
/// Pings and the closing handshake are queued, not awaited, so the keepalive and close timers run
/// while a write is stuck.
///
/// Closing: the first Close received decides the code and reason reported (§7.1.5), whatever the
/// socket does next (a reset right after it, a second Close in the same read). After the client
/// fails the connection it keeps reading and discarding until the server closes TCP or
/// `closeTimeout` passes, so its Close reaches the peer instead of being lost to a reset.
///
/// Reading: messages wait for the client in a ``DeliveryQueue``; once more than `bufferLimit`
/// bytes wait there, the read loop stops reading the socket until the client takes some, so TCP's
/// window slows the server down instead of memory growing (pings and the server's Close are read
/// again when it resumes; once closing, nothing is held back).
///
/// Compression: with permessage-deflate negotiated (RFC 7692), every data message is compressed
/// before it is framed (RSV1 on its first frame; messages are compressed in `send` order, which
/// is the order they are written), and compressed incoming messages are inflated within the
/// message size limit.
actor RFC6455Connection: WebSocketConnection {
    private enum Phase {
        /// Messages flow both ways.
        case open
        /// A Close was sent or received; reading continues for the closing handshake.
        case closing
        /// The stream is closed and `closed` was reported.
        case closed
    }

    /// Bytes written to the stream in one call at most, each call with its own deadline.
    static let writeSlice = 64 * 1024

    nonisolated let subprotocol: String?
    nonisolated let extensions: [String]
    nonisolated let wireTraffic: WireTraffic?
    /// Payload bytes of the frames of the message being received.
    private var incomingWireBytes = 0
    nonisolated let events: AsyncStream<WebSocketConnectionEvent>
    /// What `events` delivers: messages, then one `closed`.
    private let deliveries: DeliveryQueue<WebSocketConnectionEvent>
    /// The read loop waits for the client to take messages (``DeliveryQueue/waitForRoom()``).
    private var readWaitsForClient = false
    /// How many times the read loop waited for the client.
    private var readWaits = 0
    private let stream: any ByteStream
    private let closeTimeout: Duration
    private let writeTimeout: Duration
    private let sleep: @Sendable (Duration) async throws -> Void
    private let fragmentSize: Int?
    /// Compresses outgoing messages; `nil` without permessage-deflate, or when the server limited
    /// the client's window to 8 bits, which zlib cannot compress with (messages go uncompressed,
    /// which RFC 7692 §6 allows).
    private let deflater: RawDeflater?
    private var parser: FrameParser
    private var assembler: MessageAssembler
    private var phase = Phase.open
    private var pendingPongs: [@Sendable () -> Void] = []
    private var closeWaiters: [CheckedContinuation<Void, Never>] = []
    private var closeTimer: Task<Void, Never>?

    private var outgoing = OutgoingQueue()
    private var writerRunning = false
    private var writeNumber = 0
    /// Bytes written to the stream so far.
    private var bytesWritten = 0
    /// Our pings queued and not yet written.
    private var pingsAwaitingWrite = 0
    /// Our Close frame is queued (nothing is queued after it).
    private var closeQueued = false
    /// Our Close frame is written.
    private var closeSent = false
    /// The first Close frame received (§7.1.5): what is reported unless the client failed first.
    private var receivedClose: (code: WebSocketCloseCode, reason: String)?
    /// The error the client failed the connection with (1002, 1007, 1009).
    private var failure: WebSocketError?
    /// The code and reason of a closing handshake the app started.
    private var initiatedClose: (code: WebSocketCloseCode, reason: String)?
    /// After a failure: the parser's state is unusable, so bytes are read and thrown away.
    private var discarding = false
    /// Why the connection was lost (TCP, the write deadline, keepalive), once it ended: what a
    /// write it interrupted throws.
    private var lostReason: WebSocketError?

    /// - Parameters:
    ///   - leftover: bytes the server sent right after its handshake response.
    ///   - maximumMessageSize: largest frame and message accepted, in bytes (1009 above).
    ///   - fragmentSize: split outgoing messages into frames of at most this many payload bytes.
    ///   - closeTimeout: how long to wait for the server's Close after sending ours, and how long
    ///     to keep reading (discarding) after failing the connection before dropping TCP.
    ///   - writeTimeout: the deadline of each write slice (at most ``writeSlice`` bytes).
    ///   - sleep: the timers' clock (`Task.sleep` by default; tests inject a manual clock).
    ///   - compression: the permessage-deflate compressor and decompressor, when negotiated.
    ///   - bufferLimit: bytes of messages waiting for the client past which the socket is not
    ///     read; nil reads on whatever waits.
    init(
        stream: any ByteStream, leftover: [UInt8], subprotocol: String?, maximumMessageSize: Int,
        fragmentSize: Int? = nil, closeTimeout: Duration = .seconds(5), writeTimeout: Duration = .seconds(30),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        compression: DeflateCodec? = nil, bufferLimit: Int? = nil
    ) {
        let inflater = compression?.inflater
        self.deflater = compression?.deflater
        self.extensions = compression.map { [$0.answer] } ?? []
        self.wireTraffic = compression.map { _ in WireTraffic() }
        self.stream = stream
        self.subprotocol = subprotocol
        self.closeTimeout = closeTimeout
        self.writeTimeout = writeTimeout
        self.sleep = sleep
        self.fragmentSize = fragmentSize.map { max(1, $0) }
        self.parser = FrameParser(maximumPayload: maximumMessageSize)
        self.parser.allowsCompression = inflater != nil
        self.assembler = MessageAssembler(maximumMessageSize: maximumMessageSize, inflater: inflater)
        deliveries = DeliveryQueue(limit: bufferLimit)
        events = deliveries.makeStream()
        parser.append(leftover)
    }

    /// Starts reading; call once after creation.
    func start() {
        Task { await self.readLoop() }
    }

    // MARK: - Commands

    func send(_ message: WebSocketMessage) async throws {
        guard phase == .open else { throw WebSocketError.notConnected }
        let (opcode, plain): (Opcode, [UInt8]) =
            switch message {
            case .text(let text): (.text, Array(text.utf8))
            case .data(let data): (.binary, Array(data))
            }
        // Compressed here, in the actor, so the window sees messages in the order they are queued.
        let compressed = deflater != nil
        let payload = try deflater?.compress(plain) ?? plain
        var frames: [[UInt8]] = []
        if let fragmentSize, payload.count > fragmentSize {
            var offset = 0
            while offset < payload.count {
                let end = min(payload.count, offset + fragmentSize)
                let frame = Frame(
                    fin: end == payload.count, rsv1: compressed && offset == 0, opcode: offset == 0 ? opcode : .continuation,
                    payload: Array(payload[offset..<end]))
                frames.append(FrameEncoder.encode(frame, maskingKey: FrameEncoder.freshMaskingKey()))
                offset = end
            }
        } else {
            frames = [
                FrameEncoder.encode(
                    Frame(rsv1: compressed, opcode: opcode, payload: payload), maskingKey: FrameEncoder.freshMaskingKey())
            ]
        }
        // The message is sent when its last frame is written; control frames may go between its
        // fragments (§5.4), other messages never do. A send cancelled before its first frame is
        // taken for writing is withdrawn and throws `CancellationError` — unless the compressor
        // keeps its window across messages: this one is in it, and the server's decompressor
        // must see it, so it goes out (a started message always does).
        messageNumber += 1
        let number = messageNumber
        let withdrawable = deflater?.resetsAfterEachMessage ?? true
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (done: CheckedContinuation<Void, any Error>) in
                outgoing.enqueueData(frames, message: number, done: done)
                startWriter()
            }
        } onCancel: {
            guard withdrawable else { return }
            Task { await self.withdraw(number) }
        }
        wireTraffic?.addSent(payload.count)
    }

    /// Numbers the messages queued, for ``withdraw(_:)``.
    private var messageNumber = 0

    /// Withdraws message `number` if none of it was taken for writing; its `send` throws
    /// `CancellationError`.
    private func withdraw(_ number: Int) {
        outgoing.withdraw(message: number)?.resume(throwing: CancellationError())
    }

    /// Queues a ping and returns: the caller's pong timeout runs while the ping waits to be written.
    func sendPing(onPong: @escaping @Sendable () -> Void) async throws {
        guard phase == .open else { throw WebSocketError.notConnected }
        pendingPongs.append(onPong)
        guard !closeQueued else { return }
        pingsAwaitingWrite += 1
        outgoing.enqueueControl(
            FrameEncoder.encode(Frame(opcode: .ping, payload: Array("courier".utf8)), maskingKey: FrameEncoder.freshMaskingKey()),
            isPing: true)
        startWriter()
    }

    /// The weight of the messages waiting for the client (``WebSocketMessage/bufferedWeight``).
    var bufferedForClient: Int { deliveries.bufferedWeight }

    /// Whether a ping waits behind a frame being written, the bytes written so far, and whether
    /// reading waits for the client.
    var pingWrite: PingWriteProgress? {
        PingWriteProgress(
            pingWaiting: pingsAwaitingWrite > 0, bytesWritten: bytesWritten, readWaitsForClient: readWaitsForClient,
            readWaits: readWaits)
    }

    func close(code: WebSocketCloseCode, reason: String) async {
        if phase == .open {
            phase = .closing
            deliveries.stopHoldingBack()
            initiatedClose = (code, reason)
            // 1005, 1006 and 1015 (and codes outside the registered ranges) never go on the wire
            // (RFC 6455 §7.4.1): such a close sends 1000, Normal Closure.
            queueClose(code: code.isValidOnTheWire ? code : .normalClosure, reason: reason, urgent: false)
            startCloseTimer()
        }
        guard phase != .closed else { return }
        await withCheckedContinuation { closeWaiters.append($0) }
    }

    func abort(_ error: WebSocketError) async {
        finish(lost: error)
    }

    // MARK: - Reading

    private func readLoop() async {
        await deliverBuffered()
        while phase != .closed {
            let bytes: [UInt8]
            do {
                bytes = try await stream.read(maximumLength: 64 * 1024)
            } catch {
                finish(lost: (error as? WebSocketError) ?? .connectionFailed("\(error)"))
                return
            }
            guard phase != .closed else { return }
            guard !bytes.isEmpty else {
                finish(lost: nil)
                return
            }
            // After the first Close received, or after failing: read and discard.
            guard !discarding, receivedClose == nil else { continue }
            parser.append(bytes)
            await deliverBuffered()
        }
    }

    /// Handles the complete frames buffered, stopping whenever more than the buffer limit waits
    /// for the client until it took some: one 64 KiB read of compressed frames can inflate to far
    /// more than the limit, and none of it is inflated before there is room.
    private func deliverBuffered() async {
        parseBuffered()
        while phase == .open, deliveries.isOverLimit {
            await waitForClient()
            parseBuffered()
        }
    }

    /// While open and more than the buffer limit of messages wait for the client, waits (the
    /// socket is not read meanwhile); leaving `open` stops the wait.
    private func waitForClient() async {
        guard phase == .open, deliveries.isOverLimit else { return }
        readWaitsForClient = true
        readWaits += 1
        while phase == .open, deliveries.isOverLimit { await deliveries.waitForRoom() }
        readWaitsForClient = false
    }

    /// Handles the complete frames buffered; a protocol violation fails the connection.
    private func parseBuffered() {
        do {
            try processBuffered()
        } catch let error as WebSocketError {
            fail(error)
        } catch {
            fail(.protocolError("\(error)"))
        }
    }

    private func processBuffered() throws {
        // While open, no further frame is taken once the client has more than its limit waiting.
        while phase != .closed, !discarding, receivedClose == nil, !(phase == .open && deliveries.isOverLimit),
            let frame = try parser.next()
        {
            try handle(frame)
        }
    }

    private func handle(_ frame: Frame) throws {
        switch frame.opcode {
        case .text, .binary, .continuation:
            // Data after our Close is still parsed (framing errors count) but no longer delivered.
            incomingWireBytes += frame.payload.count
            if let message = try assembler.append(frame) {
                if phase == .open {
                    wireTraffic?.addReceived(incomingWireBytes)
                    deliveries.push(.message(message), weight: message.bufferedWeight)
                }
                incomingWireBytes = 0
            }
        case .ping:
            // Pongs answer pings in order; a peer that does not read them gets a bounded queue.
            if phase == .open, !closeQueued {
                outgoing.enqueuePong(
                    FrameEncoder.encode(Frame(opcode: .pong, payload: frame.payload), maskingKey: FrameEncoder.freshMaskingKey()))
                startWriter()
            }
        case .pong:
            let callbacks = pendingPongs
            pendingPongs = []
            for callback in callbacks { callback() }
        case .close:
            try handleClose(frame.payload)
        }
    }

    private func handleClose(_ payload: [UInt8]) throws {
        var code = WebSocketCloseCode.noStatusReceived
        var reason = ""
        if payload.count == 1 { throw WebSocketError.protocolError("Close frame with a 1-byte payload (RFC 6455 §5.5.1)") }
        if payload.count >= 2 {
            code = WebSocketCloseCode(rawValue: UInt16(payload[0]) << 8 | UInt16(payload[1]))
            guard code.isValidOnTheWire else { throw WebSocketError.protocolError("invalid close code \(code) (RFC 6455 §7.4)") }
            let reasonBytes = payload[2...]
            guard UTF8Validation.isValid(reasonBytes) else { throw WebSocketError.invalidUTF8 }
            reason = String(decoding: reasonBytes, as: UTF8.self)
        }
        // Recorded before anything is written: a reset or EOF right after cannot turn it into 1006.
        receivedClose = (code, reason)
        if phase == .open {
            // §5.5.1: answer with the same code; the connection ends once the answer is written.
            phase = .closing
            deliveries.stopHoldingBack()
            queueClose(code: code == .noStatusReceived ? nil : code, reason: "", urgent: true)
            startCloseTimer()
        } else if closeSent {
            // Both Close frames went: the closing handshake is complete.
            finish(lost: nil)
        }
    }

    /// Fails the connection (§7.1.7): queues a Close with the error's code, then reads and
    /// discards until the server closes TCP (or `closeTimeout`), so the Close is not lost to a reset.
    private func fail(_ error: WebSocketError) {
        guard phase != .closed else { return }
        if failure == nil, receivedClose == nil { failure = error }
        discarding = true
        phase = .closing
        deliveries.stopHoldingBack()
        queueClose(code: error.closeCode, reason: error.description, urgent: true)
        startCloseTimer()
    }

    // MARK: - Writing

    /// Queues our Close (once): `urgent` ahead of unsent data, which is dropped (its `send` throws
    /// ``WebSocketError/notConnected``); otherwise after the data already queued.
    private func queueClose(code: WebSocketCloseCode?, reason: String, urgent: Bool) {
        guard !closeQueued else { return }
        closeQueued = true
        let payload = code.map { FrameEncoder.closePayload(code: $0, reason: reason) } ?? []
        let bytes = FrameEncoder.encode(Frame(opcode: .close, payload: payload), maskingKey: FrameEncoder.freshMaskingKey())
        for dropped in outgoing.enqueueClose(bytes, urgent: urgent) { dropped.resume(throwing: WebSocketError.notConnected) }
        startWriter()
    }

    private func startWriter() {
        guard !writerRunning, phase != .closed else { return }
        writerRunning = true
        Task { await self.drainOutgoing() }
    }

    private func drainOutgoing() async {
        defer { writerRunning = false }
        while phase != .closed, let item = outgoing.next() {
            var offset = 0
            do {
                while offset < item.bytes.count {
                    let end = min(item.bytes.count, offset + Self.writeSlice)
                    try await writeWithDeadline(Array(item.bytes[offset..<end]))
                    bytesWritten += end - offset
                    offset = end
                }
            } catch {
                // A write the connection's end interrupted (the write deadline, a keepalive
                // failure) throws that reason: the stream's own error is then only `notConnected`.
                item.done?.resume(throwing: (phase == .closed ? lostReason : nil) ?? error)
                let writeError = (error as? WebSocketError) ?? .connectionFailed("\(error)")
                finish(lost: writeError)
                return
            }
            pingsAwaitingWrite -= item.pings
            item.done?.resume()
            if item.isClose { closeWritten() }
        }
    }

    /// Writes `bytes`; a write still pending after `writeTimeout` fails the connection (1006):
    /// the stream is closed, which ends the write.
    private func writeWithDeadline(_ bytes: [UInt8]) async throws {
        writeNumber += 1
        let number = writeNumber
        try await WriteDeadline.run(
            timeout: writeTimeout, sleep: sleep, expired: { [weak self] in await self?.writeTimedOut(number) },
            write: { try await stream.write(bytes) })
    }

    private func writeTimedOut(_ number: Int) {
        guard writeNumber == number, writerRunning, phase != .closed else { return }
        finish(lost: .writeTimeout(seconds: ReconnectPolicy.seconds(writeTimeout)))
    }

    /// Our Close is on the wire: the handshake is complete if the server's Close came (or we are
    /// answering it); after a failure we keep discarding until EOF or the close timer.
    private func closeWritten() {
        closeSent = true
        if receivedClose != nil, !discarding { finish(lost: nil) }
    }

    private func startCloseTimer() {
        guard closeTimer == nil else { return }
        let timeout = closeTimeout
        let sleep = self.sleep
        closeTimer = Task { [weak self] in
            do { try await sleep(timeout) } catch { return }
            await self?.finish(lost: nil)
        }
    }

    // MARK: - Ending

    /// Ends the connection: closes the stream, fails whatever is still queued and reports, in this
    /// order of precedence, the client's failure, the first Close received, the app's close, or
    /// 1006 with `lost` (TCP loss, a write deadline, a keepalive failure).
    private func finish(lost: WebSocketError?) {
        guard phase != .closed else { return }
        phase = .closed
        lostReason = lost
        closeTimer?.cancel()
        stream.close()
        pendingPongs = []
        for done in outgoing.removeAll() { done.resume(throwing: WebSocketError.notConnected) }
        let reported: (code: WebSocketCloseCode, reason: String, error: WebSocketError?)
        if let failure {
            reported = (failure.closeCode, failure.description, failure)
        } else if let receivedClose {
            reported = (receivedClose.code, receivedClose.reason, nil)
        } else if let initiatedClose {
            reported = (initiatedClose.code, initiatedClose.reason, nil)
        } else {
            reported = (.abnormalClosure, lost?.description ?? "connection closed without a Close frame", lost)
        }
        deliveries.push(.closed(code: reported.code, reason: reported.reason, error: reported.error), weight: 0)
        deliveries.finish()
        let waiters = closeWaiters
        closeWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}
