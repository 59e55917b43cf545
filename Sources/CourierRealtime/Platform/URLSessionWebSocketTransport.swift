#if canImport(Darwin)
import Courier
import Foundation

/// Apple platforms' transport: `URLSessionWebSocketTask` (iOS 13+/macOS 10.15+), kept thin — the
/// reconnect, keepalive and subscription logic lives in ``WebSocketClient`` and is tested on Linux
/// with Courier's RFC 6455 client. One ephemeral `URLSession` per connection, invalidated on close.
struct URLSessionWebSocketTransport: WebSocketTransport {
    func connect(_ request: WebSocketRequest) async throws -> any WebSocketConnection {
        try request.validate()
        guard request.trustedCertificateAuthorities == nil else {
            throw WebSocketError.unsupported(
                "a custom CA file; trust a private CA through the system or pinning on Apple platforms")
        }
        var urlRequest = URLRequest(url: request.url)
        urlRequest.timeoutInterval = ReconnectPolicy.seconds(request.connectTimeout)
        for header in request.headers { urlRequest.setValue(header.value, forHTTPHeaderField: header.name) }
        if !request.subprotocols.isEmpty {
            urlRequest.setValue(request.subprotocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
        }
        let delegate = WebSocketTaskDelegate()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        let task = session.webSocketTask(with: urlRequest)
        task.maximumMessageSize = request.maximumMessageSize
        task.resume()
        do {
            let selected = try await delegate.waitUntilOpen()
            return URLSessionWebSocketConnection(
                task: task, session: session, subprotocol: selected, writeTimeout: request.writeTimeout,
                bufferLimit: request.bufferLimit)
        } catch {
            session.invalidateAndCancel()
            if let status = (task.response as? HTTPURLResponse)?.statusCode, status != 101 {
                throw WebSocketError.handshakeRejected(status: status)
            }
            throw WebSocketError.connectionFailed(error.localizedDescription)
        }
    }
}

/// Turns the open/complete delegate callbacks into one awaitable result.
private final class WebSocketTaskDelegate: NSObject, URLSessionWebSocketDelegate, Sendable {
    private struct State: Sendable {
        var result: Result<String?, any Error>?
        var waiter: CheckedContinuation<String?, any Error>?
    }

    private let state = Locked(State())

    func waitUntilOpen() async throws -> String? {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<String?, any Error>? = state.withLock { state in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }

    private func settle(_ result: Result<String?, any Error>) {
        let waiter: CheckedContinuation<String?, any Error>? = state.withLock { state in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result)
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        settle(.success(`protocol`))
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        settle(.failure(error ?? WebSocketError.connectionFailed("the task completed before the handshake")))
    }
}

/// One open `URLSessionWebSocketTask`. Its receive loop asks for the next message only while at
/// most `bufferLimit` bytes wait for the client (the task's own buffering does the rest).
private final class URLSessionWebSocketConnection: WebSocketConnection, Sendable {
    let subprotocol: String?
    let events: AsyncStream<WebSocketConnectionEvent>
    private let deliveries: DeliveryQueue<WebSocketConnectionEvent>
    private let task: URLSessionWebSocketTask
    private let session: URLSession
    private let finished = Locked(false)
    /// How long one send may wait before the connection fails with
    /// ``WebSocketError/writeTimeout(seconds:)``: `URLSessionWebSocketTask` has no write deadline
    /// of its own, and a peer that stops reading would hold a send until the system gives up.
    private let writeTimeout: Duration

    init(
        task: URLSessionWebSocketTask, session: URLSession, subprotocol: String?, writeTimeout: Duration, bufferLimit: Int?
    ) {
        self.task = task
        self.session = session
        self.subprotocol = subprotocol
        self.writeTimeout = writeTimeout
        deliveries = DeliveryQueue(limit: bufferLimit)
        events = deliveries.makeStream()
        Task { [self] in await receiveLoop() }
    }

    private func receiveLoop() async {
        while true {
            do {
                let message: WebSocketMessage
                switch try await task.receive() {
                case .string(let text): message = .text(text)
                case .data(let data): message = .data(data)
                @unknown default: continue
                }
                deliveries.push(.message(message), weight: message.bufferedWeight)
                await deliveries.waitForRoom()
            } catch {
                let raw = UInt16(clamping: task.closeCode.rawValue)
                let code = raw == 0 ? WebSocketCloseCode.abnormalClosure : WebSocketCloseCode(rawValue: raw)
                let reason = task.closeReason.map { String(decoding: $0, as: UTF8.self) } ?? error.localizedDescription
                finish(
                    code: code, reason: reason,
                    error: code == .abnormalClosure ? .connectionFailed(error.localizedDescription) : nil)
                return
            }
        }
    }

    func send(_ message: WebSocketMessage) async throws {
        let (task, timeout) = (task, writeTimeout)
        try await WriteDeadline.run(
            timeout: timeout,
            expired: { [weak self] in await self?.abort(.writeTimeout(seconds: ReconnectPolicy.seconds(timeout))) },
            write: {
                switch message {
                case .text(let text): try await task.send(.string(text))
                case .data(let data): try await task.send(.data(data))
                }
            })
    }

    func sendPing(onPong: @escaping @Sendable () -> Void) async throws {
        task.sendPing { error in if error == nil { onPong() } }
    }

    func close(code: WebSocketCloseCode, reason: String) async {
        // As the RFC 6455 client: a code that is not valid on the wire (1005, 1006, 1015) sends 1000.
        let wireCode = code.isValidOnTheWire ? code : .normalClosure
        let closeCode = URLSessionWebSocketTask.CloseCode(rawValue: Int(wireCode.rawValue)) ?? .normalClosure
        task.cancel(with: closeCode, reason: Data(reason.utf8))
        finish(code: code, reason: reason, error: nil)
    }

    func abort(_ error: WebSocketError) async {
        task.cancel()
        finish(code: .abnormalClosure, reason: error.description, error: error)
    }

    private func finish(code: WebSocketCloseCode, reason: String, error: WebSocketError?) {
        let first = finished.withLock { finished -> Bool in
            defer { finished = true }
            return !finished
        }
        guard first else { return }
        deliveries.push(.closed(code: code, reason: reason, error: error), weight: 0)
        deliveries.finish()
        session.finishTasksAndInvalidate()
    }
}
#endif
