import Courier
import Foundation

/// A long-lived WebSocket session: connects, keeps the connection alive with pings, reconnects with
/// jittered exponential backoff, re-sends subscriptions after each reconnect and reports gaps.
///
/// ```swift
/// var configuration = WebSocketClient.Configuration(url: URL(string: "wss://api.example.com/live")!)
/// configuration.tokenManager = tokens
/// let live = WebSocketClient(configuration: configuration)
/// await live.subscribe(Subscription(id: "room:42", subscribe: .text(#"{"op":"sub","room":42}"#)))
/// await live.connect()
/// for await event in live.events() {
///     switch event {
///     case .message(let message): feed.apply(message)
///     case .reconnected: await feed.refetch()
///     case .gap(let missing): log("missed \(missing)")
///     }
/// }
/// ```
///
/// At most one connection attempt or open connection exists at any time: a single supervisor task
/// owns the connection; ``connect()`` during a backoff wait cancels the wait and attempts at once.
/// An attempt that ``close(code:reason:)`` or ``enterBackground()`` abandoned (on Apple platforms
/// TCP, TLS and the opening handshake cannot be interrupted; over libcurl an attempt under way,
/// its handshake included, ends at once and closes its socket) runs on until it ends, at the
/// latest at ``Configuration/connectTimeout``, and a connection it still opens is dropped at
/// once, without a closing handshake; the next attempt starts when it has ended.
/// No reconnect follows ``close(code:reason:)`` or a close code in
/// ``ReconnectPolicy/terminalCloseCodes``. Transport: Courier's RFC 6455 client over libcurl on
/// Linux, `URLSessionWebSocketTask` on Apple platforms.
///
/// Keep a reference to the client while its session should run: a client released without
/// ``close(code:reason:)`` is freed (at the latest when a connection attempt under way ends) and
/// closes its connection with 1001 going away.
public actor WebSocketClient {
    /// The configuration given at creation.
    public nonisolated let configuration: Configuration
    /// The current state (also published by ``states()``).
    public private(set) var state: ConnectionState = .closed(code: .normalClosure, reason: "not connected")
    /// The last failure: a dropped connection, a failed attempt or a keepalive timeout.
    public private(set) var lastFailure: WebSocketError?
    /// The subprotocol the server selected in the opening handshake of the open connection (one of
    /// ``Configuration/subprotocols``, RFC 6455 §1.9); nil while not open or when none was selected.
    public private(set) var subprotocol: String?
    /// The extensions negotiated on the open connection (`Sec-WebSocket-Extensions`, RFC 6455 §9),
    /// as the server answered them: `["permessage-deflate; …"]` when it accepted the
    /// ``Configuration/compression`` offer (RFC 7692), empty otherwise (and always with
    /// `URLSessionWebSocketTask`). A server selecting one that was not offered fails the
    /// handshake with ``WebSocketError/negotiationFailed(_:)``.
    public private(set) var extensions: [String] = []
    /// The subscriptions re-sent after each reconnect, in registration order.
    public var subscriptions: [Subscription] { registry }
    /// The session's counters since the client was created: connects, reconnects, handshake
    /// failures, messages and payload bytes each way (the open connection's so far included),
    /// close codes, pings. Each connection attempt also goes to ``Configuration/metrics`` as a
    /// `WebSocketMetricsEvent` when it ends.
    public var metrics: WebSocketSessionMetrics {
        var metrics = totals
        if let meter { metrics.add(meter.current) }
        return metrics
    }

    private let transport: any WebSocketTransport
    private let clock: ClientClock
    private let reporter: ConnectionReporter
    /// The counters of every connection that ended.
    private var totals = WebSocketSessionMetrics()
    /// The open connection's meter.
    private var meter: ConnectionMeter?
    private let random: @Sendable () -> Double
    private let stateBroadcast = Broadcast<ConnectionState>(replaysLatest: true)
    /// Messages and events, each subscriber's buffer bounded by ``Configuration/bufferLimit``.
    private let eventBroadcast: Broadcast<RealtimeEvent>
    private let messageBroadcast: Broadcast<WebSocketMessage>

    private var registry: [Subscription] = []
    /// Subscriptions a new connection's re-subscribe has yet to send. The re-subscribe awaits each
    /// send, and the actor runs ``subscribe(_:)`` and ``unsubscribe(_:)`` meanwhile: for an id in
    /// this set they only change the registry, and the re-subscribe sends what is registered when
    /// it gets there (the latest version, or nothing once it was unsubscribed).
    private var awaitingResubscribe: Set<String> = []
    private var gapDetector = SequenceGapDetector()
    private var activeRun: Int?
    private var runCounter = 0
    private var supervisor: Task<Void, Never>?
    private var backoffTask: Task<Void, any Error>?
    private var current: (any WebSocketConnection)?
    private var currentGeneration = 0
    private var hasOpened = false
    /// The sign-in (``TokenManager``'s session number) this run's connections belong to: set by
    /// its first authorized attempt, cleared when ``connect()`` starts a new run. A reconnect
    /// under another sign-in would carry this user's subscriptions onto the next user's
    /// connection, so it ends the session instead.
    private var signInSession: Int?
    /// Runs the connection attempts, one at a time (an abandoned one is waited for).
    private nonisolated let connects = AbandonableConnect()
    var resumesOnForeground = false

    /// A client using the platform's transport (RFC 6455 over libcurl on Linux,
    /// URLSessionWebSocketTask on Apple platforms), the continuous clock and system randomness.
    public init(configuration: Configuration) {
        self.init(
            configuration: configuration, transport: Self.platformTransport(), clock: ContinuousClock(),
            random: { Double.random(in: 0..<1) })
    }

    /// A client with an injected transport, clock and random source (`0..<1`), for tests.
    package init<C: Clock>(
        configuration: Configuration, transport: any WebSocketTransport, clock: C,
        random: @escaping @Sendable () -> Double
    ) where C.Duration == Duration {
        self.configuration = configuration
        self.transport = transport
        self.clock = ClientClock(clock)
        self.random = random
        reporter = ConnectionReporter(configuration: configuration)
        let limit = max(1, configuration.bufferLimit)
        eventBroadcast = Broadcast(replaysLatest: false, limit: limit) { event in
            if case .message(let message) = event { message.bufferedWeight } else { WebSocketMessage.bufferedOverhead }
        }
        messageBroadcast = Broadcast(replaysLatest: false, limit: limit) { $0.bufferedWeight }
        stateBroadcast.yield(state)
    }

    /// A client released without ``close(code:reason:)`` ends its session: the supervisor and a
    /// backoff stop, an open connection is closed with 1001 going away (in a task of its own),
    /// and the streams finish (``states()`` after a last `closed` state).
    deinit {
        supervisor?.cancel()
        backoffTask?.cancel()
        if let current {
            Task { await current.close(code: .goingAway, reason: "") }
        }
        stateBroadcast.yield(.closed(code: .goingAway, reason: "the client was released"), finishing: true)
        eventBroadcast.finish()
        messageBroadcast.finish()
    }

    // MARK: - Streams

    /// Connection states: the current one first, then every change.
    public nonisolated func states() -> AsyncStream<ConnectionState> { stateBroadcast.stream() }
    /// Messages, `reconnected` and gap events from the moment of the call. Like ``messages()``,
    /// the stream holds at most ``Configuration/bufferLimit`` bytes of messages the app has not
    /// taken, then the client stops reading the connection until it takes some: iterate it, or
    /// release it (or cancel its task).
    public nonisolated func events() -> AsyncStream<RealtimeEvent> { eventBroadcast.stream() }
    /// Only the messages, from the moment of the call, in order, none dropped. The stream holds at
    /// most ``Configuration/bufferLimit`` bytes the app has not taken; past it the client stops
    /// reading the connection (TCP then slows the server down) until the app takes some: iterate
    /// it, or release it (or cancel its task), or it holds every other stream back too.
    public nonisolated func messages() -> AsyncStream<WebSocketMessage> { messageBroadcast.stream() }

    // MARK: - Commands

    /// Starts the session (or, while waiting to reconnect, attempts at once). Returns without
    /// waiting for the connection (``state`` is ``ConnectionState/connecting`` from then on, until
    /// the attempt ends): watch ``states()``.
    ///
    /// While an earlier ``close(code:reason:)`` or ``enterBackground()`` is still closing, the new
    /// run starts once that close is done, unless a later `close(code:reason:)`,
    /// `enterBackground()` or `connect()` came meanwhile: the last command wins.
    public func connect() async {
        connectCalls += 1
        let command = connectCalls
        if supervisor != nil, activeRun != nil {
            backoffTask?.cancel()
            return
        }
        if let stale = supervisor {
            pendingConnect = command
            await stale.value
            // A close() or enterBackground() (or another connect()) came while this one waited.
            guard pendingConnect == command else { return }
            pendingConnect = nil
        }
        guard supervisor == nil else { return }
        runCounter += 1
        signInSession = nil
        let run = runCounter
        activeRun = run
        // Before returning: a caller that reads `state` right after `connect()` sees the attempt,
        // not the `.closed` of before it.
        publish(.connecting)
        let client = WeakClient(self)
        let delivery = Delivery(messages: messageBroadcast, events: eventBroadcast)
        supervisor = Task {
            await Self.supervise(client, run: run, delivery: delivery)
            await client.value?.supervisorEnded(run: run)
        }
    }

    /// Ends the session with a closing handshake (RFC 6455 §7.1.2) and no reconnect; returns when
    /// the connection is closed. `code` is one valid on the wire (1000 normal, 1001 going away,
    /// 3000–4999); another (1005, 1006 and 1015 are never sent, RFC 6455 §7.4.1) sends 1000.
    public func close(code: WebSocketCloseCode = .normalClosure, reason: String = "") async {
        _ = stopCommand()
        // Also undoes an ``enterBackground()`` whose close is still in flight: the app ended the
        // session, the foreground must not bring it back.
        resumesOnForeground = false
        await shutDown(code: code, reason: reason)
    }

    /// Numbers the ``connect()`` calls, for ``pendingConnect``.
    private var connectCalls = 0
    /// The command number of a ``connect()`` that waits for an earlier close to end before it
    /// starts a run; a later command clears it (or replaces it with its own).
    private var pendingConnect: Int?
    /// Whether a ``connect()`` waits for an earlier close to end (for tests).
    var isConnectPending: Bool { pendingConnect != nil }

    /// Records a command that stops the session: a ``connect()`` waiting for an earlier close
    /// starts nothing. Returns whether one was waiting (the app wanted the session running).
    func stopCommand() -> Bool {
        defer { pendingConnect = nil }
        return pendingConnect != nil
    }

    /// Ends the running session with a closing handshake; returns when it is closed. A
    /// ``connect()`` while the handshake is in flight (the app came back) starts a new run: its
    /// state stands, and no `.closed` is published over it.
    func shutDown(code: WebSocketCloseCode, reason: String) async {
        activeRun = nil
        backoffTask?.cancel()
        // The supervisor may wait for a slow subscriber: it must see the connection end.
        messageBroadcast.stopHoldingBack()
        eventBroadcast.stopHoldingBack()
        let running = supervisor
        if let connection = current {
            await connection.close(code: code, reason: reason)
        } else {
            running?.cancel()
        }
        await running?.value
        guard activeRun == nil else { return }
        if case .closed = state {} else { publish(.closed(code: code, reason: reason)) }
    }

    /// Sends a text message (see ``send(_:)``).
    ///
    /// - Throws: ``WebSocketError/notConnected`` unless open; the transport's errors.
    public func send(text: String) async throws { try await send(.text(text)) }

    /// Sends a binary message (see ``send(_:)``).
    ///
    /// - Throws: ``WebSocketError/notConnected`` unless open; the transport's errors.
    public func send(data: Data) async throws { try await send(.data(data)) }

    /// Sends a message; returns once its bytes are written to the connection.
    ///
    /// The client never buffers messages across connections: while `connecting`,
    /// `reconnecting` or `closed` it throws ``WebSocketError/notConnected`` at once, without
    /// waiting. An app that must not lose a message keeps its own outbox and sends it when
    /// ``states()`` reports `open` again (see the CourierRealtime article, "Sending while
    /// disconnected"). A write that makes no progress for ``Configuration/writeTimeout`` fails
    /// the connection (``WebSocketError/writeTimeout(seconds:)``, 1006) and throws. Cancelling the
    /// calling task withdraws a message none of whose bytes went out yet (it throws
    /// `CancellationError`); a message already on its way is finished.
    ///
    /// - Throws: ``WebSocketError/notConnected`` unless open (also when the connection closes
    ///   before the message was written); ``WebSocketError/writeTimeout(seconds:)`` when its own
    ///   write made no progress; `CancellationError`; the transport's errors.
    public func send(_ message: WebSocketMessage) async throws {
        guard state == .open, let current else { throw WebSocketError.notConnected }
        try await send(message, on: current, meter: meter, cancellable: true)
    }

    /// Sends `message` on `connection` and counts it on `meter` once written. Only the app's own
    /// sends are `cancellable` (a cancelled one not yet on its way is withdrawn): the client's
    /// subscribe, unsubscribe and replay messages go out whatever task runs them, or the server
    /// would miss a subscription the registry holds until the next reconnect. They go out in the
    /// order this actor issued them: each task of its own waits for the one before it, since two
    /// such tasks race to the connection (one started from a higher-priority task runs first) and
    /// an unsubscribe would overtake its subscribe, leaving the server subscribed.
    private func send(
        _ message: WebSocketMessage, on connection: any WebSocketConnection, meter: ConnectionMeter?,
        cancellable: Bool = false
    ) async throws {
        if cancellable {
            try await connection.send(message)
            meter?.sent(message)
        } else {
            try await sendInOrder([message], on: connection, meter: meter)
        }
    }

    /// Sends the client's own `messages` one after the other, after every one issued before them,
    /// and counts each on `meter` once written. They are issued at once: nothing the client issues
    /// meanwhile goes between them (an `unsubscribe(_:)` between a replacement's unsubscribe and
    /// its subscribe would leave the server holding the new version).
    private func sendInOrder(
        _ messages: [WebSocketMessage], on connection: any WebSocketConnection, meter: ConnectionMeter?
    ) async throws {
        let previous = lastClientSend
        let write = Task {
            _ = try? await previous?.value
            for message in messages {
                try await connection.send(message)
                meter?.sent(message)
            }
        }
        lastClientSend = write
        try await write.value
    }

    /// The client's own send issued last (subscribe, unsubscribe, replay): the next one waits for it.
    private var lastClientSend: Task<Void, any Error>?

    /// Registers `subscription` (replacing one with the same id) and sends it now if connected.
    /// A send failure is not thrown: the connection is then failing and the subscription goes out
    /// again after the reconnect.
    ///
    /// Replacing a subscription the open connection holds with another `subscribe` message first
    /// sends the old version's `unsubscribe` (when it has one), so the server holds only the new
    /// version, as it would after a reconnect. Registering one with the same `subscribe` message
    /// again (a view that appears again) sends nothing: the connection holds it already, and a
    /// server may refuse a second subscribe with the same id (graphql-transport-ws closes the
    /// connection with 4409). To send it again on the same connection (the server ended it),
    /// ``unsubscribe(_:)`` first.
    public func subscribe(_ subscription: Subscription) async {
        var replaced: Subscription?
        if let index = registry.firstIndex(where: { $0.id == subscription.id }) {
            replaced = registry[index]
            registry[index] = subscription
        } else {
            registry.append(subscription)
        }
        // The re-subscribe of a new connection is on its way to this id: it sends this version.
        if awaitingResubscribe.contains(subscription.id) { return }
        // The connection is up (open, or re-sending the subscriptions before it reports `open`).
        guard let current else { return }
        var messages = [subscription.subscribe]
        if let replaced {
            // The same subscribe message: the connection holds it already (sent or on its way).
            guard replaced.subscribe != subscription.subscribe else { return }
            if let undo = replaced.unsubscribe { messages.insert(undo, at: 0) }
        }
        try? await sendInOrder(messages, on: current, meter: meter)
    }

    /// Removes the subscription `id` (it is never re-sent) and sends its unsubscribe message if
    /// connected.
    public func unsubscribe(_ id: String) async {
        guard let index = registry.firstIndex(where: { $0.id == id }) else { return }
        let removed = registry.remove(at: index)
        // Not yet re-sent on the new connection: the server does not hold it there, nothing to undo.
        if awaitingResubscribe.remove(id) != nil { return }
        if let current, let message = removed.unsubscribe {
            try? await send(message, on: current, meter: meter)
        }
    }

    // MARK: - Supervisor

    private func isActive(_ run: Int) -> Bool { activeRun == run && !Task.isCancelled }

    /// How an attempt or a connection ended: the close code and reason, and whether no reconnect
    /// may follow.
    private typealias Outcome = (code: WebSocketCloseCode, reason: String, terminal: Bool)

    /// What one connection attempt of a run came to.
    private enum Attempt: Sendable {
        /// The run is over: the app ended it, or it ended for good.
        case stop
        /// The attempt failed.
        case failed(code: WebSocketCloseCode, reason: String, terminal: Bool)
        /// The connection is open (subscriptions re-sent, `open` published), measured by `meter`,
        /// opened at `opened` by the client's clock, with its keepalive.
        case serving(any WebSocketConnection, meter: ConnectionMeter, keepalive: Task<Void, Never>?, opened: Duration)
    }

    /// A reference that does not keep the client alive.
    private final class WeakClient: Sendable {
        // Written only in init; a weak reference's loads and its zeroing are atomic.
        nonisolated(unsafe) weak var value: WebSocketClient?
        init(_ value: WebSocketClient?) { self.value = value }
    }

    /// The app's streams of messages and events, which the supervisor waits on while a subscriber
    /// has ``Configuration/bufferLimit`` bytes it has not taken.
    private struct Delivery: Sendable {
        let messages: Broadcast<WebSocketMessage>
        let events: Broadcast<RealtimeEvent>

        /// Returns once every subscriber has room (or holding back stopped: the session ends).
        func waitForRoom() async {
            await messages.waitForRoom()
            await events.waitForRoom()
        }
    }

    /// What serving one event of the open connection came to.
    private enum Served: Sendable {
        case goOn
        case ended(Outcome)
    }

    /// The supervisor of run `run`: attempts, serves the open connection, backs off, until the
    /// run ends. It holds the client only while it works (an attempt is bounded by the connect
    /// timeout), never while it waits for the open connection's next event, for a slow subscriber
    /// to take messages, or for a backoff, so a client the app released without
    /// ``close(code:reason:)`` is freed and its `deinit` ends the connection.
    ///
    /// Back-pressure: after each message it waits until every subscriber of ``messages()`` and
    /// ``events()`` has room (``Configuration/bufferLimit``) before taking the next event; the
    /// connection's own buffer then fills and it stops reading the socket. A connection that ends
    /// meanwhile is reported once the app took the messages before its end.
    private static func supervise(_ client: WeakClient, run: Int, delivery: Delivery) async {
        var failures = 0
        while true {
            guard let attempt = await client.value?.attempt(run: run) else { return }
            let outcome: Outcome
            switch attempt {
            case .stop:
                return
            case .failed(let code, let reason, let terminal):
                outcome = (code, reason, terminal)
            case .serving(let connection, let meter, let keepalive, let opened):
                var ended: Outcome = (.abnormalClosure, "connection ended", false)
                for await event in connection.events {
                    guard let served = await client.value?.handle(event, on: connection, meter: meter) else { break }
                    if case .ended(let end) = served {
                        ended = end
                        break
                    }
                    await delivery.waitForRoom()
                }
                keepalive?.cancel()
                guard let strong = client.value,
                    let next = await strong.connectionEnded(connection, meter: meter, opened: opened, outcome: ended, run: run)
                else { return }
                outcome = next
            }
            guard let (delay, count) = await client.value?.afterFailure(outcome, failures: failures, run: run),
                let backoff = await client.value?.startBackoff(delay)
            else { return }
            failures = count
            await withTaskCancellationHandler {
                _ = try? await backoff.value
            } onCancel: {
                backoff.cancel()
            }
            await client.value?.backoffEnded()
        }
    }

    /// One connection attempt of run `run`: opens a connection and readies it (``Attempt/serving``),
    /// or reports why not.
    private func attempt(run: Int) async -> Attempt {
        guard isActive(run) else { return .stop }
        if state != .connecting { publish(.connecting) }
        do {
            let (connection, meter) = try await openConnection()
            guard isActive(run) else {
                let opened = clock.elapsed()
                await connection.close(code: .goingAway, reason: "closed by the app")
                finish(meter, code: .goingAway, reason: "closed by the app", opened: opened, wire: connection.wireTraffic)
                return .stop
            }
            let (keepalive, opened) = await open(connection, meter: meter, run: run)
            return .serving(connection, meter: meter, keepalive: keepalive, opened: opened)
        } catch let deferred as AuthorizationDeferred {
            // The token manager holds refreshes back (the token endpoint asked for time): the next
            // attempt waits at least that long, instead of spending the attempts at once.
            guard isActive(run) else { return .stop }
            lastFailure = deferred.failure
            waitBeforeNextAttempt = deferred.wait
            return .failed(code: Self.failureCode(deferred.failure), reason: deferred.failure.description, terminal: false)
        } catch let refused as HandshakeRetryAfter {
            // The server asked for time (429 or 503 with `Retry-After`): the next attempt waits
            // at least that long, as calls to the host through an `APIClient` would.
            guard isActive(run) else { return .stop }
            lastFailure = refused.failure
            waitBeforeNextAttempt = min(refused.wait, Self.longestServerWait)
            return .failed(code: Self.failureCode(refused.failure), reason: refused.failure.description, terminal: false)
        } catch let error as WebSocketError {
            // A run the app ended (close() during the attempt) failed by design: no failure.
            guard isActive(run) else { return .stop }
            lastFailure = error
            return .failed(code: Self.failureCode(error), reason: error.description, terminal: Self.isTerminal(error))
        } catch {
            guard isActive(run) else { return .stop }
            lastFailure = .connectionFailed("\(error)")
            return .failed(code: .policyViolation, reason: "\(error)", terminal: true)
        }
    }

    /// After a failed attempt or a dropped connection of run `run`, the `failures`-th in a row:
    /// the backoff before the next attempt and the new count, or nil when the run ends (inactive,
    /// terminal, or the attempts ran out; `closed` is then published).
    private func afterFailure(_ outcome: Outcome, failures: Int, run: Int) -> (Duration, Int)? {
        // Every unexpected end counts; a connection that stayed up past the threshold resets the
        // backoff, so this drop is attempt 1 again.
        var failures = failures + 1
        if let opened = openedAt, clock.elapsed() - opened >= configuration.reconnect.stableThreshold { failures = 1 }
        openedAt = nil
        // The last attempt's wait, and only its: one that ends the run must not hold back the next
        // run's first reconnect (up to an hour, for a `Retry-After`).
        let serverWait = waitBeforeNextAttempt
        waitBeforeNextAttempt = nil
        guard isActive(run) else { return nil }
        if outcome.terminal || failures > (configuration.reconnect.maximumAttempts ?? .max) {
            activeRun = nil
            publish(.closed(code: outcome.code, reason: outcome.reason))
            return nil
        }
        var delay = configuration.reconnect.delay(forAttempt: failures, random: random)
        if let serverWait { delay = max(delay, serverWait) }
        publish(.reconnecting(attempt: failures, delay: delay))
        return (delay, failures)
    }

    /// The least wait before the next attempt, when the last one failed because the token
    /// manager holds refreshes back (``AuthorizationDeferred``) or the server answered the
    /// handshake with a `Retry-After` (``HandshakeRetryAfter``).
    private var waitBeforeNextAttempt: Duration?

    /// The longest wait a server's `Retry-After` imposes on the next attempt (a huge one would
    /// park the session for good).
    static let longestServerWait = Duration.seconds(3600)

    /// An attempt that could not get a token because the ``TokenManager`` holds refreshes back
    /// for `wait` (the token endpoint failed transiently and asked for time, or its backoff).
    struct AuthorizationDeferred: Error {
        let wait: Duration
        let failure: WebSocketError
    }

    /// Called by the supervisor task of run `run` as it ends.
    private func supervisorEnded(run: Int) {
        if activeRun == nil || activeRun == run { supervisor = nil }
    }

    private var openedAt: Duration?

    /// Makes `connection` the open one: re-sends the subscriptions, publishes `open`, starts the
    /// keepalive (neither when run `run` ended meanwhile). Returns the keepalive task and when the
    /// connection opened.
    private func open(
        _ connection: any WebSocketConnection, meter: ConnectionMeter, run: Int
    ) async -> (keepalive: Task<Void, Never>?, opened: Duration) {
        let opened = clock.elapsed()
        self.meter = meter
        currentGeneration += 1
        let generation = currentGeneration
        current = connection
        messageBroadcast.holdBack()
        eventBroadcast.holdBack()
        subprotocol = connection.subprotocol
        extensions = connection.extensions
        // The subscriptions go out before `open` is published: an app that sends at `open` (an
        // outbox) sends after them, so the server knows the topics its messages are about. Until
        // then `send` throws `notConnected`, as while connecting. Each id is looked up again
        // before its send: a subscription replaced or removed while an earlier one was being
        // written goes out as it is now, or not at all.
        let ids = registry.map(\.id)
        awaitingResubscribe = Set(ids)
        var resubscribed = true
        for id in ids {
            guard awaitingResubscribe.remove(id) != nil, let subscription = registry.first(where: { $0.id == id }) else {
                continue
            }
            do {
                try await send(subscription.subscribe, on: connection, meter: meter)
            } catch {
                resubscribed = false
                // `notConnected`: the connection is closing or lost and ends by itself. After any
                // other failure it may still be open without this subscription: it ends here.
                if (error as? WebSocketError) != .notConnected {
                    await connection.abort(.connectionFailed("a subscription could not be sent: \(error)"))
                }
                break
            }
        }
        awaitingResubscribe = []
        // A close() or enterBackground() during the re-subscribe ended the run: the connection is
        // closing, not open, and nothing was reconnected (the supervisor reads its end next). A
        // subscription that could not be sent means the connection failed (the peer closed or
        // reset it, or a write timed out): it never held the subscriptions, so it is neither open
        // nor reconnected, and the supervisor reads its end and applies the reconnect policy.
        guard isActive(run), resubscribed else { return (nil, opened) }
        // The stable threshold counts from `open`: a connection stuck or lost in the re-subscribe
        // never was, and does not reset the backoff.
        openedAt = clock.elapsed()
        publish(.open)
        if hasOpened { eventBroadcast.yield(.reconnected) }
        hasOpened = true
        let keepalive = configuration.keepalive.map {
            startKeepalive($0, connection: connection, generation: generation, meter: meter)
        }
        return (keepalive, opened)
    }

    /// One event of the open connection: a message is delivered (serving goes on); the end of
    /// the connection returns its close code and reason.
    private func handle(
        _ event: WebSocketConnectionEvent, on connection: any WebSocketConnection, meter: ConnectionMeter
    ) async -> Served {
        switch event {
        case .message(let message):
            meter.received(message)
            await deliver(message, on: connection, meter: meter)
            return .goOn
        case .closed(let code, let reason, let error):
            if let error { lastFailure = error }
            return .ended((code, reason, false))
        }
    }

    /// The open connection ended with `outcome`: counts and reports it. Returns the outcome
    /// (terminal when its code is in ``ReconnectPolicy/terminalCloseCodes``), or nil when run
    /// `run` was ended by the app (`closed` is then published).
    private func connectionEnded(
        _ connection: any WebSocketConnection, meter: ConnectionMeter, opened: Duration, outcome: Outcome, run: Int
    ) -> Outcome? {
        current = nil
        subprotocol = nil
        extensions = []
        self.meter = nil
        finish(meter, code: outcome.code, reason: outcome.reason, opened: opened, wire: connection.wireTraffic)
        if !isActive(run) {
            publish(.closed(code: outcome.code, reason: outcome.reason))
            return nil
        }
        var outcome = outcome
        if configuration.reconnect.terminalCloseCodes.contains(outcome.code) { outcome.terminal = true }
        return outcome
    }

    /// Adds an ended connection to the totals and reports it.
    private func finish(
        _ meter: ConnectionMeter, code: WebSocketCloseCode, reason: String, opened: Duration, wire: WireTraffic?
    ) {
        totals.add(meter.current)
        totals.recordClose(code)
        reporter.closed(
            meter, code: code, reason: reason, handshakeDuration: opened - meter.started,
            openDuration: clock.elapsed() - opened, wire: wire)
    }

    private func deliver(_ message: WebSocketMessage, on connection: any WebSocketConnection, meter: ConnectionMeter) async {
        messageBroadcast.yield(message)
        eventBroadcast.yield(.message(message))
        guard let tracking = configuration.sequenceTracking, let number = tracking.sequenceNumber(message),
            let missing = gapDetector.record(number)
        else { return }
        eventBroadcast.yield(.gap(missing: missing))
        if let request = tracking.requestMissed(missing) { try? await send(request, on: connection, meter: meter) }
    }

    private func startKeepalive(
        _ policy: KeepalivePolicy, connection: any WebSocketConnection, generation: Int, meter: ConnectionMeter
    ) -> Task<Void, Never> {
        let clock = self.clock
        return Task { [weak self] in
            do {
                while true {
                    try await clock.sleep(policy.interval)
                    let pong = Locked(false)
                    let sent = clock.elapsed()
                    try await connection.sendPing {
                        pong.set(true)
                        meter.pongReceived(after: clock.elapsed() - sent)
                    }
                    meter.pingSent()
                    var progress = await connection.pingWrite
                    while true {
                        try await clock.sleep(policy.timeout)
                        if pong.current { break }
                        // No pong. A ping still queued behind a large message whose bytes keep
                        // going out is not late: the peer reads. Neither is a pong the connection
                        // has not read because the app has not taken the messages before it.
                        // Another window for them; a write that stopped (the peer stopped
                        // reading) fails the connection at once.
                        let now = await connection.pingWrite
                        guard let before = progress, let now, Self.pongMayBeLate(before: before, now: now) else {
                            await self?.keepaliveFailed(connection, generation: generation, timeout: policy.timeout)
                            return
                        }
                        progress = now
                    }
                }
            } catch {
                return  // cancelled (the connection ended) or the ping could not be written
            }
        }
    }

    /// Whether a missing pong is explained by the client, not the peer: the ping waits behind a
    /// message whose bytes kept going out, or reading waited for the app during the window.
    static func pongMayBeLate(before: PingWriteProgress, now: PingWriteProgress) -> Bool {
        let writing = now.pingWaiting && now.bytesWritten > before.bytesWritten
        let readingHeldBack = now.readWaitsForClient || now.readWaits > before.readWaits
        return writing || readingHeldBack
    }

    private func keepaliveFailed(_ connection: any WebSocketConnection, generation: Int, timeout: Duration) async {
        guard generation == currentGeneration, current != nil else { return }
        let error = WebSocketError.pongTimeout(seconds: ReconnectPolicy.seconds(timeout))
        lastFailure = error
        await connection.abort(error)
    }

    /// Starts the backoff sleep of `delay`; ``connect()`` cancels it to attempt at once.
    private func startBackoff(_ delay: Duration) -> Task<Void, any Error> {
        let sleep = clock.sleep
        let task = Task { try await sleep(delay) }
        backoffTask = task
        return task
    }

    private func backoffEnded() { backoffTask = nil }

    /// Opens one connection; on a 401 handshake refreshes the token once and tries again.
    private func openConnection() async throws -> (any WebSocketConnection, ConnectionMeter) {
        guard let tokens = configuration.tokenManager else {
            return try await handshake(configuration.request(token: nil))
        }
        // Signed out (or never signed in): the session belongs to a user who is gone. Connecting
        // without credentials would re-send that user's subscriptions on an anonymous connection.
        guard let (token, session) = try await Self.authorizing({ try await tokens.accessTokenAndSession() }) else {
            throw Self.sessionEnded(by: .signedOut)
        }
        // Another user signed in since this run connected (a sign-out and a sign-in during a
        // backoff): the registered subscriptions are the previous user's.
        if let signInSession, signInSession != session { throw Self.anotherSignIn }
        signInSession = session
        do {
            return try await handshake(configuration.request(token: token))
        } catch WebSocketError.handshakeRejected(status: 401) {
            let refreshed = try await Self.authorizing { try await tokens.refresh(failedToken: token, session: session) }
            guard let fresh = refreshed else { throw Self.anotherSignIn }
            do {
                return try await handshake(configuration.request(token: fresh))
            } catch WebSocketError.handshakeRejected(status: 401) {
                throw WebSocketError.closed(
                    code: .policyViolation, reason: "handshake rejected with HTTP 401 after a token refresh")
            }
        }
    }

    /// One opening handshake through the transport, counted and reported (a cancelled one is
    /// neither: the app closed the session meanwhile).
    private func handshake(_ request: WebSocketRequest) async throws -> (any WebSocketConnection, ConnectionMeter) {
        let meter = reporter.startAttempt(request, started: clock.elapsed(), isReconnect: hasOpened)
        do {
            let transport = self.transport
            let connection = try await connects.run { try await transport.connect(request) }
            totals.connects += 1
            if meter.isReconnect { totals.reconnects += 1 }
            reporter.opened(
                meter, after: clock.elapsed() - meter.started, subprotocol: connection.subprotocol,
                extensions: connection.extensions)
            return (connection, meter)
        } catch {
            if !Task.isCancelled, !(error is CancellationError) {
                totals.handshakeFailures += 1
                let failure =
                    (error as? HandshakeRetryAfter)?.failure ?? (error as? WebSocketError) ?? .connectionFailed("\(error)")
                reporter.handshakeFailed(meter, error: failure, after: clock.elapsed() - meter.started)
            }
            throw error
        }
    }

    /// Runs a ``TokenManager`` call and maps its failure: an ended session (signed out, refresh
    /// token refused) ends this one (1008); a transient failure of the refresh (offline, timeout,
    /// 5xx, 429, a failing connection: the manager keeps the user signed in) is a failed attempt
    /// the reconnect policy retries, and so is a token store that cannot be read or written now
    /// (a Keychain while the device is locked, `errSecInteractionNotAllowed`; a full disk); a
    /// cancelled wait is a cancellation; anything else (a store holding something other than
    /// tokens, which every attempt would read again) passes through and ends the session.
    private static func authorizing<T>(_ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch let error as TokenStoreError {
            throw storeFailure(error)
        } catch let error as NetworkError {
            switch error.kind {
            case .sessionExpired, .signedOut:
                throw sessionEnded(by: error)
            case .offline, .networkUnavailable, .timedOut, .server, .transport, .rateLimited, .backendUnavailable:
                let failure = WebSocketError.connectionFailed("the access token could not be refreshed: \(error)")
                if case .backendUnavailable(_, let wait) = error { throw AuthorizationDeferred(wait: wait, failure: failure) }
                throw failure
            case .cancelled:
                throw CancellationError()
            default:
                if case .tokenStoreFailed(let store) = error { throw storeFailure(store) }
                throw error
            }
        }
    }

    /// A token store failure as an attempt's failure: one that reading again may not repeat is a
    /// failed attempt (retried after the backoff); a corrupted store ends the session.
    private static func storeFailure(_ error: TokenStoreError) -> any Error {
        if case .corrupted = error { return error }
        return WebSocketError.connectionFailed("the access token could not be read: \(error)")
    }

    /// The failure that ends the session when the user's sign-in is gone: closed with 1008.
    private static func sessionEnded(by error: NetworkError) -> WebSocketError {
        .closed(code: .policyViolation, reason: error.localizedDescription)
    }

    /// The failure that ends the session when another user signed in since it connected: closed
    /// with 1008; ``connect()`` starts a session for the new user.
    private static let anotherSignIn = WebSocketError.closed(
        code: .policyViolation, reason: "another sign-in replaced the one this session connected with")

    private static func failureCode(_ error: WebSocketError) -> WebSocketCloseCode {
        if case .handshakeRejected(let status) = error, status == 403 { return .policyViolation }
        return error.closeCode
    }

    /// Failures that reconnecting cannot fix, because the server answers the same way every time:
    /// a final auth rejection, a 4xx handshake other than 408/429 (401 is refreshed once first
    /// when a token manager is set), a 3xx (redirects are not followed), a subprotocol or
    /// extension negotiation the client cannot use, a bad URL, an option the platform lacks.
    static func isTerminal(_ error: WebSocketError) -> Bool {
        switch error {
        case .closed(let code, _): code == .policyViolation
        case .handshakeRejected(let status): (400..<500).contains(status) && status != 408 && status != 429
        case .handshakeRedirected, .negotiationFailed, .invalidURL, .unsupported: true
        default: false
        }
    }

    private func publish(_ newState: ConnectionState) {
        state = newState
        stateBroadcast.yield(newState)
    }
}
