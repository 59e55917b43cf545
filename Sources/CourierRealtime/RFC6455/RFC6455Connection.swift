import Foundation

/// Courier's own RFC 6455 client connection over any ``ByteStream``: frames and masks what it
/// sends, parses and validates what it reads, answers pings with pongs (§5.5.2–5.5.3), runs the
/// closing handshake (§7.1.2, §5.5.1), and fails the connection with 1002, 1007 or 1009 when the
/// server breaks the protocol (§7.1.7). A connection lost without a Close frame reports 1006.
actor RFC6455Connection: WebSocketConnection {
    private enum Phase { case open, closing, closed }

    nonisolated let subprotocol: String?
    nonisolated let events: AsyncStream<WebSocketConnectionEvent>
    private let continuation: AsyncStream<WebSocketConnectionEvent>.Continuation
    private let stream: any ByteStream
    private let closeTimeout: Duration
    private let fragmentSize: Int?
    private var parser: FrameParser
    private var assembler: MessageAssembler
    private var phase = Phase.open
    private var pendingPongs: [@Sendable () -> Void] = []
    private var closeWaiters: [CheckedContinuation<Void, Never>] = []
    private var closeTimer: Task<Void, Never>?

    /// - Parameters:
    ///   - leftover: bytes the server sent right after its handshake response.
    ///   - maximumMessageSize: largest frame and message accepted, in bytes (1009 above).
    ///   - fragmentSize: split outgoing messages into frames of at most this many payload bytes.
    ///   - closeTimeout: how long to wait for the server's Close after sending ours.
    init(
        stream: any ByteStream, leftover: [UInt8], subprotocol: String?, maximumMessageSize: Int,
        fragmentSize: Int? = nil, closeTimeout: Duration = .seconds(5)
    ) {
        self.stream = stream
        self.subprotocol = subprotocol
        self.closeTimeout = closeTimeout
        self.fragmentSize = fragmentSize.map { max(1, $0) }
        self.parser = FrameParser(maximumPayload: maximumMessageSize)
        self.assembler = MessageAssembler(maximumMessageSize: maximumMessageSize)
        (events, continuation) = AsyncStream.makeStream(of: WebSocketConnectionEvent.self)
        parser.append(leftover)
    }

    /// Starts reading; call once after creation.
    func start() {
        Task { await self.readLoop() }
    }

    func send(_ message: WebSocketMessage) async throws {
        guard phase == .open else { throw WebSocketError.notConnected }
        let (opcode, payload): (Opcode, [UInt8]) =
            switch message {
            case .text(let text): (.text, Array(text.utf8))
            case .data(let data): (.binary, Array(data))
            }
        var bytes: [UInt8] = []
        if let fragmentSize, payload.count > fragmentSize {
            var offset = 0
            while offset < payload.count {
                let end = min(payload.count, offset + fragmentSize)
                let frame = Frame(
                    fin: end == payload.count, opcode: offset == 0 ? opcode : .continuation,
                    payload: Array(payload[offset..<end]))
                bytes += FrameEncoder.encode(frame, maskingKey: FrameEncoder.freshMaskingKey())
                offset = end
            }
        } else {
            bytes = FrameEncoder.encode(Frame(opcode: opcode, payload: payload), maskingKey: FrameEncoder.freshMaskingKey())
        }
        try await stream.write(bytes)
    }

    func sendPing(onPong: @escaping @Sendable () -> Void) async throws {
        guard phase == .open else { throw WebSocketError.notConnected }
        pendingPongs.append(onPong)
        try await writeFrame(Frame(opcode: .ping, payload: Array("courier".utf8)))
    }

    func close(code: WebSocketCloseCode, reason: String) async {
        if phase == .open {
            phase = .closing
            try? await writeFrame(Frame(opcode: .close, payload: FrameEncoder.closePayload(code: code, reason: reason)))
            let timeout = closeTimeout
            closeTimer = Task { [weak self] in
                try? await Task.sleep(for: timeout)
                guard !Task.isCancelled else { return }
                await self?.finish(code: code, reason: reason, error: nil)
            }
        }
        guard phase != .closed else { return }
        await withCheckedContinuation { closeWaiters.append($0) }
    }

    func abort(_ error: WebSocketError) async {
        finish(code: .abnormalClosure, reason: error.description, error: error)
    }

    // MARK: - Reading

    private func readLoop() async {
        do {
            try processBuffered()
            while phase != .closed {
                let bytes = try await stream.read(maximumLength: 64 * 1024)
                guard phase != .closed else { return }
                guard !bytes.isEmpty else {
                    finish(code: .abnormalClosure, reason: "connection closed without a Close frame", error: nil)
                    return
                }
                parser.append(bytes)
                try processBuffered()
            }
        } catch let error as WebSocketError {
            if case .connectionFailed = error {
                finish(code: .abnormalClosure, reason: error.description, error: error)
            } else {
                await fail(error)
            }
        } catch {
            finish(code: .abnormalClosure, reason: "\(error)", error: .connectionFailed("\(error)"))
        }
    }

    private func processBuffered() throws {
        while phase != .closed, let frame = try parser.next() {
            try handle(frame)
        }
    }

    private func handle(_ frame: Frame) throws {
        switch frame.opcode {
        case .text, .binary, .continuation:
            // Data after our Close is still parsed (framing errors count) but no longer delivered.
            if let message = try assembler.append(frame), phase == .open {
                continuation.yield(.message(message))
            }
        case .ping:
            if phase == .open {
                let pong = FrameEncoder.encode(
                    Frame(opcode: .pong, payload: frame.payload), maskingKey: FrameEncoder.freshMaskingKey())
                Task { try? await self.stream.write(pong) }
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
        if phase == .open {
            phase = .closing
            let reply = code == .noStatusReceived ? [] : [payload[0], payload[1]]
            let bytes = FrameEncoder.encode(Frame(opcode: .close, payload: reply), maskingKey: FrameEncoder.freshMaskingKey())
            let stream = self.stream
            Task {
                try? await stream.write(bytes)
                self.finish(code: code, reason: reason, error: nil)
            }
            return
        }
        finish(code: code, reason: reason, error: nil)
    }

    /// Fails the connection (§7.1.7): sends a Close with the error's code, then drops TCP.
    private func fail(_ error: WebSocketError) async {
        guard phase != .closed else { return }
        if phase == .open {
            phase = .closing
            try? await writeFrame(
                Frame(opcode: .close, payload: FrameEncoder.closePayload(code: error.closeCode, reason: error.description)))
        }
        finish(code: error.closeCode, reason: error.description, error: error)
    }

    private func finish(code: WebSocketCloseCode, reason: String, error: WebSocketError?) {
        guard phase != .closed else { return }
        phase = .closed
        closeTimer?.cancel()
        stream.close()
        pendingPongs = []
        continuation.yield(.closed(code: code, reason: reason, error: error))
        continuation.finish()
        let waiters = closeWaiters
        closeWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    private func writeFrame(_ frame: Frame) async throws {
        try await stream.write(FrameEncoder.encode(frame, maskingKey: FrameEncoder.freshMaskingKey()))
    }
}
