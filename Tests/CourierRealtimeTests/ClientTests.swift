import Foundation
import Testing
import Courier
import CourierTesting
@testable import CourierRealtime

@Suite("WebSocketClient: reconnect, keepalive, subscriptions, gaps, lifecycle (fake transport, injected clock)")
struct ClientTests {
    private func configuration(
        keepalive: KeepalivePolicy? = nil, reconnect: ReconnectPolicy = .standard
    ) -> WebSocketClient.Configuration {
        var configuration = WebSocketClient.Configuration(url: URL(string: "ws://fake.test/live")!)
        configuration.keepalive = keepalive
        configuration.reconnect = reconnect
        return configuration
    }

    private func subscription(_ topic: String) -> Subscription {
        Subscription(id: topic, subscribe: .text("sub \(topic)"), unsubscribe: .text("unsub \(topic)"))
    }

    @Test func backoffIsExponentialCappedAndJittered() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(500), maximumDelay: .seconds(4), jitter: .none)
        let delays = (1...6).map { policy.delay(forAttempt: $0) { 0.5 } }
        #expect(delays == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(4), .seconds(4)])
        let equal = ReconnectPolicy(initialDelay: .seconds(2), jitter: .equal)
        #expect(equal.delay(forAttempt: 1) { 0 } == .seconds(1))
        #expect(equal.delay(forAttempt: 1) { 0.999_999_999 } <= .seconds(2))
        let full = ReconnectPolicy(initialDelay: .seconds(2), jitter: .full)
        #expect(full.delay(forAttempt: 1) { 0.25 } == .milliseconds(500))
    }

    /// Issue 14 scenario on the client side: T1 before connect, T2 after, T3 subscribed and
    /// unsubscribed; the socket drops (1006) and the server refuses 3 attempts.
    @Test func subscriptionsAreResentExactlyOnceAfterAReconnect() async throws {
        let transport = FakeTransport()
        let clock = TestClock()
        let client = WebSocketClient(configuration: configuration(), transport: transport, clock: clock, random: { 0.5 })
        let events = Collected(client.events())
        let states = Collected(client.states())
        await client.subscribe(subscription("T1"))
        await client.connect()
        try await eventually("open") { await client.state == .open }
        await client.subscribe(subscription("T2"))
        await client.subscribe(subscription("T3"))
        await client.unsubscribe("T3")
        let first = try #require(transport.connections.first)
        #expect(first.sent == [.text("sub T1"), .text("sub T2"), .text("sub T3"), .text("unsub T3")])

        transport.append(.reject(503), .fail, .reject(503), .accept)
        first.end()  // TCP loss
        try await eventually("reconnected") { events.all.contains(.reconnected) && transport.connections.count == 2 }
        let second = transport.connections[1]
        #expect(second.sent == [.text("sub T1"), .text("sub T2")])
        #expect(events.all.filter { $0 == .reconnected }.count == 1)
        #expect(transport.attempts == 5)
        #expect(transport.maxConcurrent == 1)
        let attempts = states.all.compactMap { if case .reconnecting(let attempt, _) = $0 { attempt } else { nil } }
        #expect(attempts == [1, 2, 3, 4])
        // Equal jitter with random 0.5: 0.75 × 0.5 s, 1 s, 2 s, 4 s.
        #expect(clock.sleeps == [.milliseconds(375), .milliseconds(750), .milliseconds(1500), .seconds(3)])
        #expect(await client.lastFailure == .handshakeRejected(status: 503))
        await client.close()
    }

    @Test("replacing an open subscription undoes the old version first: the server holds what a reconnect would give it")
    func replacingAnOpenSubscriptionUnsubscribesTheOldVersion() async throws {
        let transport = FakeTransport()
        let client = WebSocketClient(
            configuration: configuration(), transport: transport, clock: TestClock(), random: { 0.5 })
        await client.subscribe(Subscription(id: "room", subscribe: .text("sub 42"), unsubscribe: .text("unsub 42")))
        await client.connect()
        try await eventually("open") { await client.state == .open }
        await client.subscribe(Subscription(id: "room", subscribe: .text("sub 43"), unsubscribe: .text("unsub 43")))
        // The same version again: the connection holds it already, nothing is sent (a second
        // subscribe with one id closes a graphql-transport-ws connection with 4409).
        await client.subscribe(Subscription(id: "room", subscribe: .text("sub 43"), unsubscribe: .text("unsub 43")))
        #expect(transport.connections[0].sent == [.text("sub 42"), .text("unsub 42"), .text("sub 43")])

        transport.connections[0].end()
        try await eventually("reconnected") { transport.connections.count == 2 && !transport.connections[1].sent.isEmpty }
        #expect(transport.connections[1].sent == [.text("sub 43")])
        await client.close()
    }

    /// While a reconnect re-sends the subscriptions, the app unsubscribes one not yet re-sent and
    /// replaces another: the new connection gets neither the removed one nor the old version.
    @Test("a subscription removed or replaced during a reconnect's re-subscribe is not re-sent as it was")
    func resubscribeSendsTheRegistryAsItIsNow() async throws {
        let transport = FakeTransport()
        let client = WebSocketClient(
            configuration: configuration(), transport: transport, clock: TestClock(), random: { 0.5 })
        for topic in ["A", "B", "C"] { await client.subscribe(subscription(topic)) }
        await client.connect()
        try await eventually("open") { await client.state == .open }
        let gate = SendGate(holding: .text("sub A"))
        transport.gate.set(gate)

        transport.connections[0].end()  // TCP loss: the reconnect re-sends A, B, C; A's write is held
        try await eventually("re-subscribe writing A") { gate.isHolding }
        await client.unsubscribe("B")
        await client.subscribe(Subscription(id: "C", subscribe: .text("sub C v2"), unsubscribe: .text("unsub C")))
        // New: sent at once, after A (the client's own messages go out in the order issued), so
        // its subscribe returns once A is written.
        let subscribingD = Task { await client.subscribe(subscription("D")) }
        try await eventually("D registered") { await client.subscriptions.map(\.id).contains("D") }
        gate.release()
        await subscribingD.value
        // The old code's first three were already wrong: "unsub B" went out while A was held.
        try await eventually("re-subscribe done") {
            transport.connections.count == 2 && transport.connections[1].sent.count >= 3
        }
        #expect(transport.connections[1].sent == [.text("sub A"), .text("sub D"), .text("sub C v2")])
        #expect(await client.subscriptions.map(\.id) == ["A", "C", "D"])
        await client.close()
    }

    @Test func backoffResetsOnlyAfterAStableConnection() async throws {
        let transport = FakeTransport()
        let clock = TestClock()
        let client = WebSocketClient(
            configuration: configuration(reconnect: ReconnectPolicy(stableThreshold: .seconds(10))),
            transport: transport, clock: clock, random: { 0.5 })
        let states = Collected(client.states())
        await client.connect()
        try await eventually("open 1") { await client.state == .open }
        transport.connections[0].end()  // drops at once: attempt 1
        try await eventually("open 2") {
            let open = await client.state == .open
            return transport.connections.count == 2 && open
        }
        transport.connections[1].end()  // drops at once again: attempt 2
        try await eventually("open 3") {
            let open = await client.state == .open
            return transport.connections.count == 3 && open
        }
        clock.advance(by: .seconds(10))  // stays up for the threshold
        transport.connections[2].end()  // backoff starts over: attempt 1
        try await eventually("open 4") {
            let open = await client.state == .open
            return transport.connections.count == 4 && open
        }
        let attempts = states.all.compactMap { if case .reconnecting(let attempt, _) = $0 { attempt } else { nil } }
        #expect(attempts == [1, 2, 1])
        await client.close()
    }

    @Test func noReconnectAfterADeliberateCloseOrAPolicyCloseCode() async throws {
        let transport = FakeTransport()
        let client = WebSocketClient(configuration: configuration(), transport: transport, clock: TestClock(), random: { 0.5 })
        await client.connect()
        try await eventually("open") { await client.state == .open }
        await client.close(code: .normalClosure, reason: "done")
        #expect(await client.state == .closed(code: .normalClosure, reason: "done"))
        #expect(transport.connections[0].closeCode == .normalClosure)

        await client.connect()
        try await eventually("open again") {
            let open = await client.state == .open
            return transport.connections.count == 2 && open
        }
        transport.connections[1].end(code: .policyViolation, reason: "banned")
        try await eventually("closed by policy") { await client.state == .closed(code: .policyViolation, reason: "banned") }
        for _ in 0..<50 { await Task.yield() }
        #expect(transport.attempts == 2)
        #expect(transport.maxConcurrent == 1)
    }

    @Test func connectDuringBackoffCancelsTheTimerAndNeverOverlaps() async throws {
        let transport = FakeTransport(script: [.fail, .accept])
        let clock = TestClock(mode: .manual)
        let client = WebSocketClient(
            configuration: configuration(reconnect: ReconnectPolicy(initialDelay: .seconds(60))),
            transport: transport, clock: clock, random: { 0.5 })
        await client.connect()
        try await clock.waitForSleepers(count: 1)  // waiting 45 s before attempt 2
        guard case .reconnecting(attempt: 1, _) = await client.state else {
            Issue.record("not backing off")
            return
        }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<20 { group.addTask { await client.connect() } }
        }
        try await eventually("open") { await client.state == .open }
        #expect(transport.attempts == 2, "20 connect() calls made exactly one early attempt")
        #expect(transport.maxConcurrent == 1)
        #expect(clock.now.offset == .zero, "the timer was cancelled, not waited out")
        await client.close()
    }

    /// An open client pinging every 5 s with a 2 s pong timeout, on a manual clock.
    private func keepaliveClient(answersPings: Bool) async throws -> (FakeTransport, TestClock, WebSocketClient) {
        let transport = FakeTransport(answersPings: answersPings)
        let clock = TestClock(mode: .manual)
        let client = WebSocketClient(
            configuration: configuration(keepalive: KeepalivePolicy(interval: .seconds(5), timeout: .seconds(2))),
            transport: transport, clock: clock, random: { 0.5 })
        await client.connect()
        try await eventually("open") { await client.state == .open }
        return (transport, clock, client)
    }

    @Test func aSilentServerFailsWithinPingIntervalPlusTimeout() async throws {
        let (transport, clock, client) = try await keepaliveClient(answersPings: false)
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(5))  // ping goes out
        try await eventually("ping sent") { transport.connections[0].pings == 1 }
        try await clock.waitForSleepers(count: 1)
        #expect(await client.state == .open)
        clock.advance(by: .seconds(2))  // no pong
        try await eventually("failure reported") {
            if case .reconnecting(attempt: 1, _) = await client.state { return true }
            return false
        }
        #expect(clock.now.offset == .seconds(7))
        #expect(await client.lastFailure == .pongTimeout(seconds: 2))
        #expect(transport.connections[0].closeCode == .abnormalClosure)
        await client.close()
    }

    @Test("a ping queued behind a large message that is still being written gets more time; once the writes stop, it fails")
    func aPingBehindAMovingWriteWaitsAndAStoppedOneFails() async throws {
        let (transport, clock, client) = try await keepaliveClient(answersPings: false)
        let connection = transport.connections[0]
        connection.writes.set(PingWriteProgress(pingWaiting: true, bytesWritten: 1000))
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(5))  // the ping is queued behind a message being written
        try await eventually("ping queued") { connection.pings == 1 }
        for written in [64_000, 128_000] {  // the message's bytes keep going out
            try await clock.waitForSleepers(count: 1)
            connection.writes.set(PingWriteProgress(pingWaiting: true, bytesWritten: written))
            clock.advance(by: .seconds(2))
            try await clock.waitForSleepers(count: 1)
            #expect(await client.state == .open)
        }
        clock.advance(by: .seconds(2))  // no byte went out in this window: the peer stopped reading
        try await eventually("failure reported") {
            if case .reconnecting(attempt: 1, _) = await client.state { return true }
            return false
        }
        #expect(clock.now.offset == .seconds(11))
        #expect(await client.lastFailure == .pongTimeout(seconds: 2))
        await client.close()
    }

    @Test("close() while a connect cannot be interrupted returns at once; the connection that opens later is dropped")
    func closeDuringAnUninterruptibleConnectReturnsAtOnce() async throws {
        let hold = Hold()
        let transport = FakeTransport(script: [.acceptAfter(hold)])
        let client = WebSocketClient(configuration: configuration(), transport: transport, clock: TestClock(), random: { 0.5 })
        await client.connect()
        try await eventually("connecting") { transport.attempts == 1 }
        await client.close()  // returns without the connect (the old code waited for it)
        #expect(await client.state == .closed(code: .normalClosure, reason: ""))
        #expect(await client.lastFailure == nil, "a deliberate close is no failure")
        #expect(transport.connections.isEmpty)

        hold.release()  // the connect completes after all: nobody owns that connection
        try await eventually("late connection dropped") { transport.connections.first?.isClosed == true }
        #expect(transport.connections[0].closeCode == nil || transport.connections[0].closeCode == .abnormalClosure)
        #expect(await client.state == .closed(code: .normalClosure, reason: ""))
    }

    @Test(
        "a connect() after a close() that abandoned an attempt waits for it: never two attempts at once", .timeLimit(.minutes(1)))
    func aConnectAfterAnAbandonedAttemptNeverOverlapsIt() async throws {
        let hold = Hold()
        let transport = FakeTransport(script: [.acceptAfter(hold), .accept])
        let client = WebSocketClient(configuration: configuration(), transport: transport, clock: TestClock(), random: { 0.5 })
        await client.connect()
        try await eventually("connecting") { transport.attempts == 1 }
        await client.close()
        await client.connect()  // the first attempt is still under way
        try await Task.sleep(for: .milliseconds(100))
        #expect(transport.attempts == 1, "the second attempt started beside the first")
        hold.release()
        try await eventually("open") { await client.state == .open }
        #expect(transport.attempts == 2)
        #expect(transport.maxConcurrent == 1)
        // A close() while waiting for an abandoned attempt returns at once too.
        let second = Hold()
        transport.append(.acceptAfter(second), .accept)
        await client.close()
        await client.connect()
        try await eventually("third attempt") { transport.attempts == 3 }
        await client.close()
        await client.connect()
        await client.close()
        #expect(await client.state == .closed(code: .normalClosure, reason: ""))
        second.release()
        await client.close()
    }

    @Test func anAnsweringServerStaysOpenAcrossPings() async throws {
        let (transport, clock, client) = try await keepaliveClient(answersPings: true)
        for round in 1...3 {
            try await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(5))
            try await eventually("ping \(round)") { transport.connections[0].pings == round }
            try await clock.waitForSleepers(count: 1)
            clock.advance(by: .seconds(2))
        }
        try await clock.waitForSleepers(count: 1)
        #expect(await client.state == .open)
        #expect(transport.attempts == 1)
        await client.close()
    }

    @Test func sequenceGapAsksForTheMissedMessages() async throws {
        let transport = FakeTransport()
        var configuration = configuration()
        configuration.sequenceTracking = SequenceTracking(
            sequenceNumber: { message in
                guard case .text(let text) = message, text.hasPrefix("seq ") else { return nil }
                return Int(text.dropFirst(4))
            },
            requestMissed: { .text("replay \($0.lowerBound)-\($0.upperBound)") })
        let client = WebSocketClient(configuration: configuration, transport: transport, clock: TestClock(), random: { 0.5 })
        let events = Collected(client.events())
        await client.connect()
        try await eventually("open") { await client.state == .open }
        let connection = transport.connections[0]
        for number in [1, 2, 5, 3, 6] { connection.deliver(.text("seq \(number)")) }
        try await eventually("delivered") { events.all.filter { if case .message = $0 { true } else { false } }.count == 5 }
        #expect(events.all.filter { if case .gap = $0 { true } else { false } } == [.gap(missing: 3...4)])
        #expect(connection.sent == [.text("replay 3-4")])
        await client.close()
    }

    @Test func backgroundClosesWithGoingAwayAndForegroundReconnectsAndResubscribes() async throws {
        let transport = FakeTransport()
        let client = WebSocketClient(configuration: configuration(), transport: transport, clock: TestClock(), random: { 0.5 })
        let events = Collected(client.events())
        await client.subscribe(subscription("T1"))
        await client.connect()
        try await eventually("open") { await client.state == .open }
        await client.enterBackground()
        #expect(transport.connections[0].closeCode == .goingAway)
        #expect(await client.state == .closed(code: .goingAway, reason: WebSocketClient.backgroundReason))
        await client.enterForeground()
        try await eventually("reopened") { transport.connections.count == 2 && events.all.contains(.reconnected) }
        #expect(transport.connections[1].sent == [.text("sub T1")])
        await client.close()
        await client.enterForeground()  // a deliberate close is not undone by the foreground
        for _ in 0..<50 { await Task.yield() }
        #expect(transport.attempts == 2)
    }

    /// The app closes the session (or goes to the background) while a reconnect re-sends the
    /// subscriptions: B is never sent, so the connection was never open and nothing reconnected.
    /// `open` and `reconnected` were published after the close all the same (an app refetched).
    @Test(
        "a close or background during the re-subscribe publishes neither open nor reconnected",
        .timeLimit(.minutes(1)), arguments: [false, true])
    func aSessionEndedDuringTheResubscribeIsNeverOpen(background: Bool) async throws {
        let transport = FakeTransport()
        let client = WebSocketClient(configuration: configuration(), transport: transport, clock: TestClock(), random: { 0.5 })
        let events = Collected(client.events())
        for topic in ["A", "B"] { await client.subscribe(subscription(topic)) }
        await client.connect()
        try await eventually("open") { await client.state == .open }
        let states = Collected(client.states())
        let gate = SendGate(holding: .text("sub A"))
        transport.gate.set(gate)
        transport.connections[0].end()  // the reconnect re-sends A (held on the wire), then B
        try await eventually("re-subscribe writing A") { gate.isHolding }
        let ending = Task { if background { await client.enterBackground() } else { await client.close() } }
        try await eventually("closed by the app") { transport.connections[1].isClosed }
        gate.release()
        await ending.value
        let code: WebSocketCloseCode = background ? .goingAway : .normalClosure
        let closed = ConnectionState.closed(code: code, reason: background ? WebSocketClient.backgroundReason : "")
        try await eventually("every state up to closed collected") { states.all.last == closed }
        #expect(transport.connections[1].sent == [.text("sub A")])
        // From the drop on (the stream starts with the `open` of the first connection).
        let sinceDrop = states.all.drop { if case .reconnecting = $0 { false } else { true } }
        #expect(!sinceDrop.isEmpty && !sinceDrop.contains(.open))
        #expect(!events.all.contains(.reconnected))
        #expect(await client.state == closed)
    }

    /// The closing handshake of `enterBackground()` takes a round trip; the app may come back (or
    /// end the session) before it is done. An open client subscribed to T1 whose background close
    /// waits in its handshake until the test releases `hold`.
    private func backgroundClosing() async throws -> (
        FakeTransport, WebSocketClient, hold: Hold, background: Task<Void, Never>
    ) {
        let transport = FakeTransport()
        let client = WebSocketClient(configuration: configuration(), transport: transport, clock: TestClock(), random: { 0.5 })
        await client.subscribe(subscription("T1"))
        await client.connect()
        try await eventually("open") { await client.state == .open }
        let hold = Hold()
        transport.connections[0].closeHold.set(hold)
        let background = Task { await client.enterBackground() }
        try await eventually("closing") { hold.isHolding }
        return (transport, client, hold, background)
    }

    @Test("the foreground during the background's closing handshake reconnects once the close is done")
    func foregroundDuringTheBackgroundCloseReconnects() async throws {
        let (transport, client, hold, background) = try await backgroundClosing()
        let foreground = Task { await client.enterForeground() }
        hold.release()
        await background.value
        await foreground.value
        try await eventually("reopened") {
            let open = await client.state == .open
            return transport.connections.count == 2 && open
        }
        #expect(transport.connections[0].closeCode == .goingAway)
        #expect(transport.connections[1].sent == [.text("sub T1")])
        await client.close()
    }

    @Test("a close during the background's closing handshake is not undone by the foreground")
    func closeDuringTheBackgroundCloseStaysClosed() async throws {
        let (transport, client, hold, background) = try await backgroundClosing()
        let closing = Task { await client.close() }
        // The app's close reaches the client while the handshake waits.
        try await eventually("close called") { await !client.resumesOnForeground }
        hold.release()
        await background.value
        await closing.value
        await client.enterForeground()
        if case .closed = await client.state {} else { Issue.record("reconnected: \(await client.state)") }
        #expect(transport.attempts == 1)
    }

    @Test func aHundredClientsSpreadTheirFirstRetries() async throws {
        let random = SeededRandom(seed: 14)
        let clock = TestClock(mode: .manual)
        var clients: [WebSocketClient] = []
        for _ in 0..<100 {
            let client = WebSocketClient(
                configuration: configuration(reconnect: ReconnectPolicy(initialDelay: .seconds(1))),
                transport: FakeTransport(script: [.fail]), clock: clock, random: { random.next() })
            clients.append(client)
            await client.connect()
        }
        try await clock.waitForSleepers(count: 100)
        var delays: [Double] = []
        for client in clients {
            guard case .reconnecting(attempt: 1, let delay) = await client.state else {
                Issue.record("not backing off")
                continue
            }
            delays.append(ReconnectPolicy.seconds(delay))
        }
        #expect(delays.count == 100)
        #expect(delays.allSatisfy { $0 >= 0.5 && $0 <= 1.0 }, "equal jitter keeps delays in [d/2, d]")
        let buckets = Dictionary(grouping: delays) { Int(($0 - 0.5) * 40) }  // 25 ms buckets
        #expect(buckets.count >= 16, "20 buckets of 25 ms: most are used")
        #expect(buckets.values.map(\.count).max() ?? 0 <= 12, "no bucket gets a crowd")
        #expect((delays.max() ?? 0) - (delays.min() ?? 0) >= 0.4)
        for client in clients { await client.close() }
    }

    // MARK: - Token manager

    /// A token manager whose refresh request fails with `error` (the token endpoint is unreachable).
    private func tokens(
        _ tokens: AuthTokens, refreshFails error: URLError.Code, now: @escaping @Sendable () -> Date = Date.init
    ) -> TokenManager {
        TokenManager(
            store: InMemoryTokenStore(tokens), transport: StubTransport { _ in throw URLError(error) },
            grant: .oauth2(tokenURL: URL(string: "https://auth.test/token")!), now: now)
    }

    private func isReconnecting(_ state: ConnectionState) -> Bool {
        if case .reconnecting = state { return true }
        return false
    }

    /// Alice signed in, subscribed to her inbox and connected (open); reconnects after 1 s.
    private func aliceOnline() async throws -> (TokenManager, FakeTransport, TestClock, WebSocketClient) {
        let tokens = tokens(AuthTokens(accessToken: "alice-token", refreshToken: "r1"), refreshFails: .badServerResponse)
        var configuration = configuration(reconnect: ReconnectPolicy(initialDelay: .seconds(1), jitter: .none))
        configuration.tokenManager = tokens
        let transport = FakeTransport()
        let clock = TestClock(mode: .manual)
        let client = WebSocketClient(configuration: configuration, transport: transport, clock: clock, random: { 0.5 })
        await client.subscribe(Subscription(id: "inbox", subscribe: .text("sub alice/inbox")))
        await client.connect()
        try await eventually("open") { await client.state == .open }
        return (tokens, transport, clock, client)
    }

    @Test("a sign-out ends the session: the reconnect does not connect without credentials", .timeLimit(.minutes(1)))
    func aSignedOutSessionEndsInsteadOfReconnectingAnonymously() async throws {
        let (tokens, transport, clock, client) = try await aliceOnline()
        try await tokens.signOut()
        transport.connections[0].end()  // TCP loss after the sign-out
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        try await eventually("attempt ended") {
            switch await client.state {
            case .open, .closed: true
            default: false
            }
        }
        #expect(transport.attempts == 1, "handshakes: \(transport.requests.map { $0.headers.map(\.name) })")
        let signedOut = WebSocketError.closed(code: .policyViolation, reason: NetworkError.signedOut.localizedDescription)
        #expect(await client.state == .closed(code: .policyViolation, reason: signedOut.description))
        #expect(await client.lastFailure == signedOut)
    }

    @Test("a reconnect after another user signed in ends the session; connect() starts the new user's", .timeLimit(.minutes(1)))
    func aReconnectUnderAnotherSignInEndsTheSession() async throws {
        let (tokens, transport, clock, client) = try await aliceOnline()
        try await tokens.signOut()
        try await tokens.signIn(AuthTokens(accessToken: "bob-token", refreshToken: "r2"))
        transport.connections[0].end()  // TCP loss during the change of user
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        try await eventually("attempt ended") {
            if case .closed = await client.state { return true }
            return false
        }
        #expect(transport.attempts == 1, "Alice's subscriptions went out on Bob's connection")
        #expect(await client.lastFailure?.closeCode == .policyViolation)

        await client.unsubscribe("inbox")
        await client.connect()
        try await eventually("open as Bob") { await client.state == .open }
        #expect(transport.attempts == 2)
        #expect(transport.requests.last?.headers.first { $0.name == "Authorization" }?.value == "Bearer bob-token")
    }

    /// The token expired while the network was down: the reconnect's refresh fails offline. The
    /// token manager keeps the user signed in, so the client backs off and tries again.
    @Test(.timeLimit(.minutes(1)))
    func aRefreshThatFailsOfflineIsRetried() async throws {
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let now = Locked(start)
        let tokens = tokens(
            AuthTokens(accessToken: "a1", refreshToken: "r1", expiresAt: start.addingTimeInterval(3600)),
            refreshFails: .notConnectedToInternet, now: { now.current })
        var configuration = configuration(reconnect: ReconnectPolicy(initialDelay: .seconds(1), jitter: .none))
        configuration.tokenManager = tokens
        let transport = FakeTransport()
        let clock = TestClock(mode: .manual)
        let client = WebSocketClient(configuration: configuration, transport: transport, clock: clock, random: { 0.5 })
        await client.connect()
        try await eventually("open") { await client.state == .open }
        now.set(start.addingTimeInterval(7200))
        transport.connections[0].end()
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))  // attempt 1: the refresh fails offline
        let describeState: @Sendable () async -> String = { "\(await client.state)" }
        try await eventually("attempt 1 ended", state: describeState) {
            switch await client.state {
            case .reconnecting(attempt: 2, _), .closed: true
            default: false
            }
        }
        let failure = await client.lastFailure
        #expect(isReconnecting(await client.state), "ended: \(String(describing: failure))")
        #expect(transport.attempts == 1)
        await client.close()
    }

    /// The same through a 401: the one refresh after it times out.
    @Test(.timeLimit(.minutes(1)))
    func aRefreshThatTimesOutAfterA401IsRetried() async throws {
        var configuration = configuration(reconnect: ReconnectPolicy(initialDelay: .seconds(1), jitter: .none))
        configuration.tokenManager = tokens(AuthTokens(accessToken: "a1", refreshToken: "r1"), refreshFails: .timedOut)
        let transport = FakeTransport(script: [.reject(401)])
        let client = WebSocketClient(
            configuration: configuration, transport: transport, clock: TestClock(mode: .manual), random: { 0.5 })
        await client.connect()
        try await eventually("attempt ended") {
            let state = await client.state
            if case .closed = state { return true }
            return isReconnecting(state)
        }
        let failure = await client.lastFailure
        #expect(isReconnecting(await client.state), "ended: \(String(describing: failure))")
        await client.close()
    }

    /// A store that fails its first `failures` reads with `error` (a Keychain while the device is
    /// locked: `errSecInteractionNotAllowed`), then reads `tokens`.
    private final class LockedDeviceStore: TokenStore {
        let inner: InMemoryTokenStore
        let failuresLeft: Locked<Int>
        let error: TokenStoreError
        init(_ tokens: AuthTokens, failures: Int, error: TokenStoreError) {
            inner = InMemoryTokenStore(tokens)
            failuresLeft = Locked(failures)
            self.error = error
        }
        func read() throws -> AuthTokens? {
            let fail = failuresLeft.withLock { left -> Bool in
                defer { left = max(0, left - 1) }
                return left > 0
            }
            if fail { throw error }
            return inner.read()
        }
        func write(_ tokens: AuthTokens) throws { inner.write(tokens) }
        func clear() throws { inner.clear() }
    }

    /// A reconnect while the device is locked (a background wake-up) cannot read the Keychain; the
    /// next attempt, after the backoff, can. The session stays alive and opens with the token.
    @Test(.timeLimit(.minutes(1)))
    func aTokenStoreThatCannotBeReadYetIsRetried() async throws {
        let store = LockedDeviceStore(
            AuthTokens(accessToken: "a1", refreshToken: "r1"), failures: 1,
            error: .keychain(operation: "read", status: -25308))
        var configuration = configuration(reconnect: ReconnectPolicy(initialDelay: .seconds(1), jitter: .none))
        configuration.tokenManager = TokenManager(
            store: store, transport: StubTransport { _ in throw URLError(.badServerResponse) },
            grant: .oauth2(tokenURL: URL(string: "https://auth.test/token")!))
        let transport = FakeTransport()
        let clock = TestClock(mode: .manual)
        let client = WebSocketClient(configuration: configuration, transport: transport, clock: clock, random: { 0.5 })
        await client.connect()
        let describeState: @Sendable () async -> String = { "\(await client.state)" }
        try await eventually("attempt 1 ended", state: describeState) {
            switch await client.state {
            case .reconnecting, .closed: true
            default: false
            }
        }
        let failure = await client.lastFailure
        #expect(isReconnecting(await client.state), "ended: \(String(describing: failure))")
        #expect(transport.attempts == 0)
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        try await eventually("open", state: describeState) { await client.state == .open }
        #expect(transport.attempts == 1)
        #expect(transport.requests.last?.headers.first { $0.name == "Authorization" }?.value == "Bearer a1")
        await client.close()
    }

    /// A store that holds something other than tokens reads the same on every attempt: the
    /// session ends at once instead of backing off for ever.
    @Test(.timeLimit(.minutes(1)))
    func aCorruptedTokenStoreEndsTheSession() async throws {
        let store = LockedDeviceStore(
            AuthTokens(accessToken: "a1", refreshToken: "r1"), failures: .max, error: .corrupted("not a token object"))
        var configuration = configuration(reconnect: ReconnectPolicy(initialDelay: .seconds(1), jitter: .none))
        configuration.tokenManager = TokenManager(
            store: store, transport: StubTransport { _ in throw URLError(.badServerResponse) },
            grant: .oauth2(tokenURL: URL(string: "https://auth.test/token")!))
        let transport = FakeTransport()
        let client = WebSocketClient(
            configuration: configuration, transport: transport, clock: TestClock(mode: .manual), random: { 0.5 })
        await client.connect()
        try await eventually("closed") {
            if case .closed = await client.state { return true }
            return false
        }
        #expect(transport.attempts == 0)
    }

    // MARK: - Commands while a close is in flight

    @Test("a close() after a connect() that waits for an earlier close ends the session", .timeLimit(.minutes(1)))
    func theLastCloseWinsOverAConnectWaitingForAnEarlierClose() async throws {
        let (transport, client, hold, background) = try await backgroundClosing()
        let reconnect = Task { await client.connect() }  // waits for the background's close
        try await eventually("connect waits") { await client.isConnectPending }
        transport.connections[0].closeHold.set(nil)
        await client.close()  // the app's last word
        hold.release()
        await background.value
        await reconnect.value
        let state = await client.state
        if case .closed = state {} else { Issue.record("after the last close(): \(state)") }
        #expect(transport.attempts == 1, "a connection was opened after close() returned")
    }

    @Test("background, foreground, background while the first close is in flight ends closed", .timeLimit(.minutes(1)))
    func backgroundForegroundBackgroundEndsClosed() async throws {
        let (transport, client, hold, background) = try await backgroundClosing()
        let foreground = Task { await client.enterForeground() }
        try await eventually("connect waits") { await client.isConnectPending }
        transport.connections[0].closeHold.set(nil)
        await client.enterBackground()
        hold.release()
        await background.value
        await foreground.value
        let state = await client.state
        if case .closed = state {} else { Issue.record("in the background: \(state)") }
        #expect(transport.attempts == 1)
        #expect(await client.resumesOnForeground)  // the next foreground reconnects
    }

    // MARK: - Subscriptions before `open`

    /// `open` means the subscriptions are on the connection: what the app sends from there (its
    /// outbox, flushed at `open`) goes after them. Meanwhile `send` throws `notConnected`.
    @Test(.timeLimit(.minutes(1)))
    func openIsPublishedAfterTheResubscribe() async throws {
        let transport = FakeTransport()
        let client = WebSocketClient(configuration: configuration(), transport: transport, clock: TestClock(), random: { 0.5 })
        for topic in ["A", "B"] { await client.subscribe(subscription(topic)) }
        await client.connect()
        try await eventually("open") { await client.state == .open }
        let gate = SendGate(holding: .text("sub A"))
        transport.gate.set(gate)
        transport.connections[0].end()  // the reconnect re-sends A (held on the wire), then B
        try await eventually("re-subscribe writing A") { gate.isHolding }
        #expect(await client.state == .connecting)
        await #expect(throws: WebSocketError.notConnected) { try await client.send(.text("early")) }
        // Registered during the re-subscribe: goes out too, after A (its subscribe returns once A
        // is written).
        let subscribingC = Task { await client.subscribe(subscription("C")) }
        try await eventually("C registered") { await client.subscriptions.map(\.id).contains("C") }
        gate.release()
        await subscribingC.value
        try await eventually("open again") { await client.state == .open }
        try await client.send(.text("post B"))
        #expect(Set(transport.connections[1].sent.prefix(3)) == [.text("sub A"), .text("sub B"), .text("sub C")])
        #expect(transport.connections[1].sent.count == 4 && transport.connections[1].sent.last == .text("post B"))
        await client.close()
    }

    // MARK: - A client released without close()

    final class WeakClient: @unchecked Sendable {
        weak var value: WebSocketClient?
    }

    @Test("a client released without close() is freed and closes its connection with 1001", .timeLimit(.minutes(1)))
    func aReleasedClientClosesItsConnection() async throws {
        let transport = FakeTransport()
        let weak = WeakClient()
        let states: AsyncStream<ConnectionState>
        do {
            let client = WebSocketClient(
                configuration: configuration(), transport: transport, clock: TestClock(), random: { 0.5 })
            weak.value = client
            states = client.states()
            await client.connect()
            try await eventually("open") { await client.state == .open }
        }
        try await eventually("released") { weak.value == nil }
        try await eventually("closed") { transport.connections[0].isClosed }
        #expect(transport.connections[0].closeCode == .goingAway)
        var last: ConnectionState?
        for await state in states { last = state }  // the stream finishes
        #expect(last == .closed(code: .goingAway, reason: "the client was released"))
    }
}
