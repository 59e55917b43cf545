import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
@testable import CourierRealtime

/// A deterministic `0..<1` source (SplitMix64) so jitter is reproducible.
final class SeededRandom: Sendable {
    private let state: Locked<UInt64>
    init(seed: UInt64) { state = Locked(seed) }

    func next() -> Double {
        let value: UInt64 = state.withLock { state in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        return Double(value >> 11) / Double(1 << 53)
    }
}

/// A scripted connection: records what the client sends; the test injects messages and drops.
final class FakeConnection: WebSocketConnection, Sendable {
    let subprotocol: String? = nil
    let events: AsyncStream<WebSocketConnectionEvent>
    private let continuation: AsyncStream<WebSocketConnectionEvent>.Continuation
    private let state = Locked(
        (sent: [WebSocketMessage](), pings: 0, closed: false, answersPings: true, code: WebSocketCloseCode?.none))
    private let onEnd: @Sendable () -> Void

    init(answersPings: Bool, gate: SendGate? = nil, onEnd: @escaping @Sendable () -> Void) {
        (events, continuation) = AsyncStream.makeStream(of: WebSocketConnectionEvent.self)
        self.onEnd = onEnd
        self.gate = gate
        state.withLock { $0.answersPings = answersPings }
    }

    var sent: [WebSocketMessage] { state.current.sent }
    var pings: Int { state.current.pings }
    var isClosed: Bool { state.current.closed }
    var closeCode: WebSocketCloseCode? { state.current.code }

    /// Holds the first send of a given message until the test releases it (see ``SendGate``).
    let gate: SendGate?

    /// What ``pingWrite`` reports (`nil`: a transport that cannot tell); the test moves it.
    let writes = Locked<PingWriteProgress?>(nil)
    var pingWrite: PingWriteProgress? { writes.current }

    func send(_ message: WebSocketMessage) async throws {
        try state.withLock { state in
            guard !state.closed else { throw WebSocketError.notConnected }
            state.sent.append(message)
        }
        // Queued in call order (as a real connection's outgoing queue), written later.
        await gate?.pass(message)
    }

    func sendPing(onPong: @escaping @Sendable () -> Void) async throws {
        let answers = try state.withLock { state -> Bool in
            guard !state.closed else { throw WebSocketError.notConnected }
            state.pings += 1
            return state.answersPings
        }
        if answers { onPong() }
    }

    /// While set, ``close(code:reason:)`` waits for it after sending its Close (the server's
    /// answer is slow to come).
    let closeHold = Locked<Hold?>(nil)

    func close(code: WebSocketCloseCode, reason: String) async {
        state.withLock { if !$0.closed { $0.code = code } }
        if let hold = closeHold.current { await hold.wait() }
        end(code: code, reason: reason, error: nil)
    }
    func abort(_ error: WebSocketError) async { end(code: .abnormalClosure, reason: error.description, error: error) }

    /// The server sends `message`.
    func deliver(_ message: WebSocketMessage) { continuation.yield(.message(message)) }
    /// TCP drops (1006) or the server closes with `code`.
    func end(code: WebSocketCloseCode = .abnormalClosure, reason: String = "dropped", error: WebSocketError? = nil) {
        let first = state.withLock { state -> Bool in
            defer { state.closed = true }
            if !state.closed { state.code = code }
            return !state.closed
        }
        guard first else { return }
        continuation.yield(.closed(code: code, reason: reason, error: error))
        continuation.finish()
        onEnd()
    }
}

/// A wait the test ends: ``wait()`` returns once ``release()`` was called.
final class Hold: Sendable {
    private let waiting = Locked(false)
    private let released: AsyncStream<Void>
    private let releaseContinuation: AsyncStream<Void>.Continuation

    init() { (released, releaseContinuation) = AsyncStream.makeStream(of: Void.self) }

    /// Whether someone waits (or waited).
    var isHolding: Bool { waiting.current }

    func wait() async {
        waiting.set(true)
        for await _ in released { break }
    }

    func release() { releaseContinuation.finish() }
}

/// Holds the first send of `held` on its way out until ``release()``: the sender waits in the
/// middle of a write, as on a socket whose peer reads slowly.
final class SendGate: Sendable {
    let held: WebSocketMessage
    private let holding = Locked(false)
    private let released: AsyncStream<Void>
    private let releaseContinuation: AsyncStream<Void>.Continuation

    init(holding held: WebSocketMessage) {
        self.held = held
        (released, releaseContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    /// Whether a send of `held` is waiting.
    var isHolding: Bool { holding.current }

    func pass(_ message: WebSocketMessage) async {
        guard message == held,
            !holding.withLock({ was in
                defer { was = true }
                return was
            })
        else { return }
        for await _ in released { break }
    }

    func release() { releaseContinuation.finish() }
}

/// A transport whose attempts succeed or fail as the test says; counts attempts and live sockets.
final class FakeTransport: WebSocketTransport, Sendable {
    enum Outcome: Sendable {
        case accept
        case reject(Int)
        case fail
        /// Accepts once `hold` is released, deaf to cancellation (as libcurl's connect).
        case acceptAfter(Hold)
    }
    private struct State: Sendable {
        var script: [Outcome] = []
        var attempts = 0
        var inFlight = 0
        var live = 0
        var maxConcurrent = 0
        var connections: [FakeConnection] = []
        var requests: [WebSocketRequest] = []
    }
    private let state = Locked(State())
    let answersPings: Bool

    /// Given to every connection made from now on.
    let gate = Locked<SendGate?>(nil)

    init(script: [Outcome] = [], answersPings: Bool = true) {
        self.answersPings = answersPings
        state.withLock { $0.script = script }
    }

    var attempts: Int { state.current.attempts }
    var maxConcurrent: Int { state.current.maxConcurrent }
    var connections: [FakeConnection] { state.current.connections }
    var requests: [WebSocketRequest] { state.current.requests }
    func append(_ outcomes: Outcome...) { state.withLock { $0.script += outcomes } }

    func connect(_ request: WebSocketRequest) async throws -> any WebSocketConnection {
        let outcome: Outcome = state.withLock { state in
            state.attempts += 1
            state.requests.append(request)
            state.inFlight += 1
            state.maxConcurrent = max(state.maxConcurrent, state.inFlight + state.live)
            return state.script.isEmpty ? .accept : state.script.removeFirst()
        }
        await Task.yield()
        defer { state.withLock { $0.inFlight -= 1 } }
        switch outcome {
        case .reject(let status): throw WebSocketError.handshakeRejected(status: status)
        case .fail: throw WebSocketError.connectionFailed("refused")
        case .acceptAfter(let hold):
            await Task { await hold.wait() }.value  // a task of its own: not cancelled with the caller
            return accept()
        case .accept:
            return accept()
        }
    }

    private func accept() -> any WebSocketConnection {
        let connection = FakeConnection(answersPings: answersPings, gate: gate.current) { [state] in
            state.withLock { $0.live -= 1 }
        }
        state.withLock { state in
            state.live += 1
            state.connections.append(connection)
        }
        return connection
    }
}

/// Waits (bounded: 30 s of real time, polling every 5 ms) until `condition` holds; a failure
/// says what `state` describes at that moment (the client's state, its last failure).
func eventually(
    _ what: String, state: @Sendable () async -> String = { "" }, _ condition: @Sendable () async -> Bool
) async throws {
    let clock = ContinuousClock()
    let start = clock.now
    while clock.now - start < .seconds(30) {
        if await condition() { return }
        try await Task.sleep(for: .milliseconds(5))
    }
    let now = await state()
    Issue.record("timed out waiting for: \(what)\(now.isEmpty ? "" : " (\(now))")")
    throw CancellationError()
}

/// Collects a stream's values in the background.
final class Collected<Value: Sendable>: Sendable {
    private let values = Locked([Value]())
    private let task: Locked<Task<Void, Never>?> = Locked(nil)
    init(_ stream: AsyncStream<Value>) {
        let values = self.values
        task.set(Task { for await value in stream { values.withLock { $0.append(value) } } })
    }
    var all: [Value] { values.current }
    deinit { task.current?.cancel() }
}

/// The WebSocket servers `scripts/test` starts.
enum RealtimeServers {
    static func url(_ variable: String) throws -> URL {
        guard let text = ProcessInfo.processInfo.environment[variable], let url = URL(string: text) else {
            throw TestServerMissing(variable: variable)
        }
        return url
    }

    static func namespace(_ prefix: String) -> String { "\(prefix)-\(UUID().uuidString.prefix(8).lowercased())" }

    /// `GET /ns/{ns}/_control?action=...` on the ws server (plain HTTP).
    @discardableResult
    static func control(_ namespace: String, _ query: String) async throws -> [String: Any] {
        let base = try url("COURIER_WS_URL").absoluteString.replacingOccurrences(of: "ws://", with: "http://")
        let target = try #require(URL(string: "\(base)/ns/\(namespace)/_control?\(query)"))
        let (data, _) = try await URLSession.shared.data(from: target)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}

struct TestServerMissing: Error, CustomStringConvertible {
    let variable: String
    var description: String { "\(variable) is not set: run the suite through scripts/test, which starts the servers" }
}

/// Walks a reconnecting client's backoff on `clock`: each refused attempt sleeps on the clock;
/// once `reopenAfter` of backoff has passed the server `namespace` accepts again and the next
/// advance lets the attempt through. Returns the backoff walked.
@discardableResult
func walkBackoffUntilAccepted(
    _ client: WebSocketClient, clock: TestClock, namespace: String, reopenAfter: Duration = .seconds(3)
) async throws -> Duration {
    var waited = Duration.zero
    for _ in 0..<10 {
        try await clock.waitForSleepers(count: 1)
        guard case .reconnecting(_, let delay) = await client.state else {
            Issue.record("not backing off")
            break
        }
        let reopen = waited >= reopenAfter
        if reopen { try await RealtimeServers.control(namespace, "action=accept") }
        waited += delay
        clock.advance(by: delay)
        if reopen { break }
    }
    return waited
}
