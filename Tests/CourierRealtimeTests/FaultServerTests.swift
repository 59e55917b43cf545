import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
@testable import CourierRealtime

/// WebSocketClient over libcurl against TestServer/ws_fault_server.py, a second WebSocket server
/// independent of the `websockets` one (raw asyncio, its own handshake and framing), which commits
/// the faults: a peer that stops reading, a Close then a TCP reset, 3xx and negotiation answers,
/// ping storms, two Close frames at once, an oversized message. The proof is the server's counts.
@Suite("WebSocketClient against the raw fault server (libcurl)", .timeLimit(.minutes(3)))
struct FaultServerTests {
    // MARK: - Support

    private func url(_ namespace: String, _ kind: String, _ query: String = "") throws -> URL {
        let base = try RealtimeServers.url("COURIER_WS_FAULTS_URL").absoluteString
        return try #require(URL(string: "\(base)/ns/\(namespace)/\(kind)\(query.isEmpty ? "" : "?\(query)")"))
    }

    private func stats(_ namespace: String) async throws -> [String: Any] {
        let base = try RealtimeServers.url("COURIER_WS_FAULTS_URL").absoluteString.replacingOccurrences(
            of: "ws://", with: "http://")
        let target = try #require(URL(string: "\(base)/ns/\(namespace)/_stats"))
        let (data, _) = try await URLSession.shared.data(from: target)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    private func handshakes(_ namespace: String, _ kind: String) async throws -> Int {
        ((try await stats(namespace))["handshakes"] as? [String: Int])?[kind] ?? 0
    }

    /// The Close codes the server received on `kind` ("none": TCP ended without one; "end": the
    /// client ended TCP after its Close).
    private func closes(_ namespace: String, _ kind: String) async throws -> [String] {
        (((try await stats(namespace))["closes"] as? [String: [Any]])?[kind] ?? []).map { "\($0)" }
    }

    /// A client over libcurl whose backoff and keepalive run on `clock` and whose connection
    /// timers (write deadlines, close timeout) run on `connectionClock`; the socket's send buffer
    /// is bounded to 16 KiB so a peer that stops reading blocks writes quickly.
    private func client(
        _ url: URL, clock: TestClock, connectionClock: TestClock = TestClock(mode: .manual),
        configure: (inout WebSocketClient.Configuration) -> Void = { _ in }
    ) -> WebSocketClient {
        var configuration = WebSocketClient.Configuration(url: url)
        configuration.keepalive = nil
        configuration.reconnect = ReconnectPolicy(initialDelay: .seconds(1), jitter: .none)
        configure(&configuration)
        var transport = RFC6455Transport { request in
            var bounded = request
            bounded.sendBufferSize = 16 * 1024
            return try await CurlByteStream.connect(bounded)
        }
        transport.sleep = ClientClock(connectionClock).sleep
        return WebSocketClient(configuration: configuration, transport: transport, clock: clock, random: { 0.5 })
    }

    /// Advances `clock` by `step` whenever something sleeps on it, until `done` (bounded: 40 steps,
    /// each followed by up to 2 s of polling). For timers whose sleeper may come and go (a write
    /// slice's deadline is replaced by the next slice's while bytes still move).
    private func advance(_ clock: TestClock, by step: Duration, until done: @Sendable () -> Bool) async throws {
        for _ in 0..<40 {
            if done() { return }
            try await clock.waitForSleepers(count: 1)
            clock.advance(by: step)
            for _ in 0..<400 where !done() { try await Task.sleep(for: .milliseconds(5)) }
        }
        Issue.record("the clock was advanced 40 times without the awaited outcome")
    }

    private func isClosed(_ state: ConnectionState) -> Bool {
        if case .closed = state { return true }
        return false
    }

    private func isReconnecting(_ state: ConnectionState) -> Bool {
        if case .reconnecting = state { return true }
        return false
    }

    // MARK: - A peer that stops reading

    @Test func aPeerThatStopsReadingFailsAtTheWriteDeadlineAndTheClientReconnects() async throws {
        let namespace = RealtimeServers.namespace("stuck")
        let clock = TestClock(mode: .manual)
        let connectionClock = TestClock(mode: .manual)
        let live = client(try url(namespace, "stop-reading"), clock: clock, connectionClock: connectionClock) {
            $0.writeTimeout = .seconds(30)
        }
        await live.connect()
        try await eventually("open") { await live.state == .open }
        // 8 MiB cannot fit in the server's 4 KiB receive buffer plus the client's 16 KiB send buffer.
        let finished = Locked(false)
        let sending = Task {
            defer { finished.set(true) }
            try await live.send(data: Data(count: 8 << 20))
        }
        // Each write slice has a 30 s deadline; the one that stays stuck fails the connection.
        try await advance(connectionClock, by: .seconds(30)) { finished.current }
        await #expect(throws: WebSocketError.self) { try await sending.value }
        try await eventually("reconnecting") { self.isReconnecting(await live.state) }
        #expect(await live.lastFailure == .writeTimeout(seconds: 30))
        // The reconnect policy applies: after the backoff the server sees a second handshake.
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        try await eventually("open again") { await live.state == .open }
        #expect(try await handshakes(namespace, "stop-reading") == 2)
        let closed = Locked(false)
        let closing = Task {
            await live.close()
            closed.set(true)
        }
        // The server never answers the Close: close() returns at the close timeout.
        try await advance(connectionClock, by: .seconds(5)) { closed.current }
        await closing.value
        #expect(await live.state == .closed(code: .normalClosure, reason: ""))
    }

    @Test func theKeepaliveFiresWhileAWriteIsStuck() async throws {
        let namespace = RealtimeServers.namespace("stuck-ping")
        let clock = TestClock(mode: .manual)
        let connectionClock = TestClock(mode: .manual)  // never advanced: no write deadline fires
        let live = client(try url(namespace, "stop-reading"), clock: clock, connectionClock: connectionClock) {
            $0.keepalive = KeepalivePolicy(interval: .seconds(20), timeout: .seconds(5))
            $0.reconnect = .never
        }
        await live.connect()
        try await eventually("open") { await live.state == .open }
        let sending = Task { try await live.send(data: Data(count: 8 << 20)) }
        try await connectionClock.waitForSleepers(count: 1)  // the data write is stuck
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(20))  // the ping is queued behind the stuck write
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(5))  // no pong: the connection fails
        try await eventually("closed") { self.isClosed(await live.state) }
        #expect(await live.lastFailure == .pongTimeout(seconds: 5))
        #expect(await live.state == .closed(code: .abnormalClosure, reason: WebSocketError.pongTimeout(seconds: 5).description))
        await #expect(throws: WebSocketError.self) { try await sending.value }
        #expect(try await handshakes(namespace, "stop-reading") == 1)
    }

    @Test func closeReturnsAtTheCloseTimeoutWhileAWriteIsStuck() async throws {
        let namespace = RealtimeServers.namespace("stuck-close")
        let connectionClock = TestClock(mode: .manual)
        let live = client(try url(namespace, "stop-reading"), clock: TestClock(mode: .manual), connectionClock: connectionClock)
        await live.connect()
        try await eventually("open") { await live.state == .open }
        let sending = Task { try await live.send(data: Data(count: 8 << 20)) }
        try await connectionClock.waitForSleepers(count: 1)
        let closing = Task { await live.close(code: .goingAway, reason: "leaving") }
        try await connectionClock.waitForSleeper(for: .seconds(5))  // the close timeout, next to a write deadline
        connectionClock.advance(by: .seconds(5))
        await closing.value
        #expect(await live.state == .closed(code: .goingAway, reason: "leaving"))
        await #expect(throws: WebSocketError.self) { try await sending.value }
    }

    // MARK: - A peer that goes away during the re-subscribe

    /// The server takes connection 1's 40 subscriptions (80 KiB), then sends a Close (1001) and
    /// resets TCP; it reads nothing of connection 2 and does the same 0.3 s after its handshake,
    /// while the client's re-subscribe writes are blocked on the full window. Connection 2 never
    /// held the subscriptions: the app must not see `open` or `reconnected` for it, and the
    /// reconnect policy goes on (attempt 2).
    @Test func aConnectionLostDuringTheResubscribeIsNeitherOpenNorReconnected() async throws {
        let namespace = RealtimeServers.namespace("drop-midway")
        let clock = TestClock(mode: .manual)
        let live = client(try url(namespace, "drop-midway", "first=40"), clock: clock)
        let padding = String(repeating: "x", count: 2048)
        for index in 0..<40 {
            await live.subscribe(Subscription(id: "t\(index)", subscribe: .text(#"{"topic":"t\#(index)","pad":"\#(padding)"}"#)))
        }
        let states = Collected(live.states())
        let events = Collected(live.events())
        await live.connect()
        // Connection 1 is open once the server read its subscriptions, and dropped right after.
        let describe = { @Sendable in "states \(states.all), server \(String(describing: try? await self.stats(namespace)))" }
        try await eventually("connection 1 dropped", state: describe) {
            states.all.contains(.reconnecting(attempt: 1, delay: .seconds(1)))
        }
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        try await eventually("connection 2 dropped", state: describe) {
            states.all.contains(.reconnecting(attempt: 2, delay: .seconds(2)))
        }
        let stats = try await stats(namespace)
        // The server's view: all 40 subscriptions on connection 1, none read on connection 2.
        #expect((stats["messages"] as? [String: [Int]])?["drop-midway"] == [40, 0])
        #expect(try await handshakes(namespace, "drop-midway") == 2)
        #expect(
            states.all == [
                .closed(code: .normalClosure, reason: "not connected"), .connecting, .open,
                .reconnecting(attempt: 1, delay: .seconds(1)), .connecting, .reconnecting(attempt: 2, delay: .seconds(2)),
            ])
        #expect(!events.all.contains(.reconnected))
        await live.close()
    }

    /// A server that completes the handshake and never reads: the re-subscribe's writes are
    /// stuck until the write deadline, 15 s later on the client's clock. That connection was never
    /// open, so it does not count as one that stayed up past the stable threshold (10 s): the
    /// failures in a row go on counting, and with `maximumAttempts: 1` the session ends after it
    /// instead of retrying a server that accepts and stalls for ever at the first delay.
    @Test func aConnectionStuckInTheResubscribeDoesNotResetTheBackoff() async throws {
        let namespace = RealtimeServers.namespace("stuck-resubscribe")
        let clock = TestClock(mode: .manual)
        let connectionClock = TestClock(mode: .manual)
        let live = client(try url(namespace, "stop-reading"), clock: clock, connectionClock: connectionClock) {
            $0.reconnect = ReconnectPolicy(
                initialDelay: .seconds(1), jitter: .none, stableThreshold: .seconds(10), maximumAttempts: 1)
        }
        let states = Collected(live.states())
        await live.connect()
        try await eventually("open") { await live.state == .open }
        // 256 KiB of subscriptions: more than the server's 4 KiB window and the client's 16 KiB
        // send buffer hold, so they are stuck on connection 1, and on connection 2 they fail it.
        let padding = String(repeating: "x", count: 8192)
        let subscribing = Task {
            for index in 0..<32 {
                await live.subscribe(
                    Subscription(id: "t\(index)", subscribe: .text(#"{"topic":"t\#(index)","pad":"\#(padding)"}"#)))
            }
        }
        try await advance(connectionClock, by: .seconds(30)) { self.isReconnecting(states.all.last ?? .connecting) }
        try await clock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(1))
        // Connection 2: the re-subscribe is stuck while 15 s pass, then its write deadline fails it.
        try await connectionClock.waitForSleepers(count: 1)
        clock.advance(by: .seconds(15))
        try await advance(connectionClock, by: .seconds(30)) { states.all.count >= 6 }
        let seen = states.all
        #expect(isClosed(seen[5]), "\(seen)")
        #expect(
            Array(seen.prefix(5)) == [
                .closed(code: .normalClosure, reason: "not connected"), .connecting, .open,
                .reconnecting(attempt: 1, delay: .seconds(1)), .connecting,
            ])
        #expect(seen.count == 6, "\(seen)")
        #expect(await live.lastFailure == .writeTimeout(seconds: 30))
        #expect(try await handshakes(namespace, "stop-reading") == 2)
        subscribing.cancel()
        await live.close()
    }

    // MARK: - The first Close received counts

    /// The server sends a Close and ends TCP at once (FIN, or a reset): the app sees the code
    /// every time, and a terminal code (1008, 1003) is not retried.
    @Test(arguments: ["close-then-fin", "close-then-reset"])
    func aCloseFollowedByTheEndOfTCPKeepsItsCode(_ kind: String) async throws {
        for code in [1008, 1003] {
            for _ in 0..<15 {
                let namespace = RealtimeServers.namespace("first-close")
                let live = client(
                    try url(namespace, kind, "code=\(code)&reason=do%20not%20come%20back"), clock: TestClock(mode: .manual))
                await live.connect()
                let describe = { @Sendable in
                    "state \(await live.state), last failure \(String(describing: await live.lastFailure))"
                }
                try await eventually("closed", state: describe) {
                    self.isClosed(await live.state)
                }
                let state = await live.state
                let seen = await describe()
                #expect(
                    state == .closed(code: WebSocketCloseCode(rawValue: UInt16(code)), reason: "do not come back"), "\(seen)")
                #expect(try await handshakes(namespace, kind) == 1, "\(seen)")
            }
        }
        // A code that is not terminal is reported as it came too (no reconnect with `.never`).
        for _ in 0..<15 {
            let namespace = RealtimeServers.namespace("first-close")
            let live = client(try url(namespace, kind, "code=4000&reason=later"), clock: TestClock(mode: .manual)) {
                $0.reconnect = .never
            }
            await live.connect()
            let describe = { @Sendable in "state \(await live.state), last failure \(String(describing: await live.lastFailure))"
            }
            try await eventually("closed", state: describe) {
                self.isClosed(await live.state)
            }
            let state = await live.state
            let seen = await describe()
            // On failure the message names the state and the last failure (a flake seen under load).
            #expect(state == .closed(code: WebSocketCloseCode(rawValue: 4000), reason: "later"), "\(seen)")
        }
    }

    // MARK: - Handshake answers that will not change on retry

    @Test(arguments: [301, 302, 307, 308])
    func aRedirectEndsTheSessionWithATypedError(_ status: Int) async throws {
        let namespace = RealtimeServers.namespace("redirect")
        let live = client(
            try url(namespace, "redirect", "status=\(status)&location=ws://127.0.0.1:9/moved"), clock: TestClock(mode: .manual))
        await live.connect()
        try await eventually("closed") { self.isClosed(await live.state) }
        #expect(await live.lastFailure == .handshakeRedirected(status: status, location: "ws://127.0.0.1:9/moved"))
        #expect(try await handshakes(namespace, "redirect") == 1)
    }

    @Test func negotiationTheClientCannotUseEndsTheSession() async throws {
        let cases: [(query: String, offered: [String], requires: Bool)] = [
            ("protocol=chat", [], false),
            ("protocol=v3", ["v1", "v2"], false),
            ("", ["v1", "v2"], true),
            ("extensions=x-webkit-deflate-frame", [], false),  // an extension never offered
        ]
        for item in cases {
            let namespace = RealtimeServers.namespace("negotiate")
            let live = client(try url(namespace, "negotiate", item.query), clock: TestClock(mode: .manual)) {
                $0.subprotocols = item.offered
                $0.requiresSubprotocol = item.requires
            }
            await live.connect()
            try await eventually("closed") { self.isClosed(await live.state) }
            guard case .negotiationFailed = await live.lastFailure else {
                Issue.record("\(item): \(String(describing: await live.lastFailure))")
                continue
            }
            #expect(try await handshakes(namespace, "negotiate") == 1, "\(item)")
        }
    }

    @Test func aClientErrorStatusEndsTheSessionAndAServerErrorIsRetried() async throws {
        for status in [403, 404, 410] {
            let namespace = RealtimeServers.namespace("reject")
            let live = client(try url(namespace, "reject", "status=\(status)"), clock: TestClock(mode: .manual))
            await live.connect()
            try await eventually("closed") { self.isClosed(await live.state) }
            #expect(await live.lastFailure == .handshakeRejected(status: status))
            #expect(try await handshakes(namespace, "reject") == 1)
        }
        let namespace = RealtimeServers.namespace("reject")
        let clock = TestClock(mode: .manual)
        let live = client(try url(namespace, "reject", "status=503"), clock: clock)
        await live.connect()
        try await clock.waitForSleepers(count: 1)
        #expect(self.isReconnecting(await live.state))
        clock.advance(by: .seconds(1))
        try await eventually("second handshake") { (try? await self.handshakes(namespace, "reject")) == 2 }
        await live.close()
    }

    /// A server that answers the handshake with 429 or 503 and `Retry-After: 60` (overloaded, in
    /// maintenance) gets the next attempt after 60 s, not after the reconnect policy's 1 s.
    @Test(arguments: [429, 503])
    func aRetryAfterOnARefusedHandshakeIsWaitedOut(_ status: Int) async throws {
        let namespace = RealtimeServers.namespace("retry-after")
        let clock = TestClock(mode: .manual)
        let live = client(try url(namespace, "reject", "status=\(status)&retry-after=60"), clock: clock)
        await live.connect()
        try await clock.waitForSleepers(count: 1)
        #expect(await live.state == .reconnecting(attempt: 1, delay: .seconds(60)))
        #expect(await live.lastFailure == .handshakeRejected(status: status))
        clock.advance(by: .seconds(1))
        try await clock.waitForSleepers(count: 1)  // still the same wait
        #expect(try await handshakes(namespace, "reject") == 1)
        clock.advance(by: .seconds(59))
        try await eventually("second handshake") { (try? await self.handshakes(namespace, "reject")) == 2 }
        await live.close()
    }

    /// A `Retry-After` on the attempt that ended a run (its reconnect attempts spent) is that
    /// run's: the next `connect()` backs off on the policy's schedule, not for the old hour.
    @Test func aRetryAfterThatEndedARunDoesNotDelayTheNextRun() async throws {
        let namespace = RealtimeServers.namespace("retry-after-run")
        let clock = TestClock(mode: .manual)
        let live = client(try url(namespace, "reject", "status=503&retry-after=3600&retry-after-on=2"), clock: clock) {
            $0.reconnect = ReconnectPolicy(initialDelay: .seconds(1), jitter: .none, maximumAttempts: 1)
        }
        await live.connect()
        try await clock.waitForSleepers(count: 1)
        #expect(await live.state == .reconnecting(attempt: 1, delay: .seconds(1)))
        clock.advance(by: .seconds(1))
        // The second handshake asks for an hour; it was the run's last attempt: closed.
        try await eventually("closed") { self.isClosed(await live.state) }
        #expect(try await handshakes(namespace, "reject") == 2)

        await live.connect()
        try await clock.waitForSleepers(count: 1)
        let next = await live.state
        #expect(next == .reconnecting(attempt: 1, delay: .seconds(1)), "the policy's first delay, not the old Retry-After")
        clock.advance(by: .seconds(1))
        try await eventually("fourth handshake") { (try? await self.handshakes(namespace, "reject")) == 4 }
        await live.close()
    }

    @Test func theNegotiatedSubprotocolIsExposed() async throws {
        let namespace = RealtimeServers.namespace("negotiate")
        let live = client(try url(namespace, "negotiate", "protocol=v2"), clock: TestClock(mode: .manual)) {
            $0.subprotocols = ["v1", "v2"]
            $0.requiresSubprotocol = true
        }
        await live.connect()
        try await eventually("open") { await live.state == .open }
        #expect(await live.subprotocol == "v2")
        #expect(await live.extensions == [])
        await live.close()
        #expect(await live.subprotocol == nil)
    }

    // MARK: - The handshake's header fields

    /// A header value holding CR LF (a display name from user input, a token read from a file
    /// with Windows line ends) is one Swift `Character`, neither "\r" nor "\n": it must still
    /// never add a field of its own to the handshake.
    @Test func aHeaderValueWithALineBreakAddsNoFieldToTheHandshake() async throws {
        let namespace = RealtimeServers.namespace("crlf")
        let live = client(try url(namespace, "echo"), clock: TestClock(mode: .manual)) {
            $0.headers = ["X-Display-Name": "Ann\r\nX-Injected: yes", "X-App": "courier"]
        }
        await live.connect()
        try await eventually("open") { await live.state == .open }
        await live.close()
        let stats = try await stats(namespace)
        let names = try #require((stats["headerNames"] as? [String: [[String]]])?["echo"]?.first)
        #expect(names.contains("x-app"))
        #expect(!names.contains("x-injected"), "fields the server read: \(names)")
    }

    /// A path segment that holds an escaped "/", "?" or space (a room named "42/b?c d") reaches
    /// the server as the URL has it, not decoded into other segments, a query, or a request line
    /// with a space in it.
    @Test func aPercentEncodedPathReachesTheServerAsTheURLHasIt() async throws {
        let namespace = RealtimeServers.namespace("escaped-path")
        let target = "/ns/\(namespace)/echo/room%2F42%3Fb%20c?topic=a%26b"
        let base = try RealtimeServers.url("COURIER_WS_FAULTS_URL").absoluteString
        let live = client(try #require(URL(string: base + target)), clock: TestClock(mode: .manual))
        await live.connect()
        try await eventually("open or closed") {
            let state = await live.state
            return state == .open || self.isClosed(state)
        }
        let failure = await live.lastFailure
        #expect(await live.state == .open, "last failure: \(String(describing: failure))")
        await live.close()
        #expect(try await stats(namespace)["targets"] as? [String] == [target])
    }

    // MARK: - The connect timeout

    /// The wall-clock check: `scripts/test` runs suites named `OnAQuietMachine` one test at a time.
    @Suite("on a quiet machine") struct OnAQuietMachine {
        /// `connectTimeout` bounds TCP, TLS and the opening handshake together: a server that
        /// takes 1.5 s to finish TLS and then never answers the upgrade fails a 3 s attempt at
        /// 3 s, not at 1.5 s + 3 s.
        @Test func theConnectTimeoutBoundsTLSAndTheHandshakeTogether() async throws {
            let faults = try RealtimeServers.url("COURIER_WS_FAULTS_URL").absoluteString.replacingOccurrences(
                of: "ws://", with: "http://")
            func slowTLS() async throws -> [String: Int] {
                let (data, _) = try await URLSession.shared.data(from: try #require(URL(string: faults + "/_slow-tls")))
                return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Int])
            }
            let before = try await slowTLS()
            let port = try #require(before["port"])
            var configuration = WebSocketClient.Configuration(url: try #require(URL(string: "wss://127.0.0.1:\(port)/x")))
            configuration.trustedCertificateAuthorities = URL(
                fileURLWithPath: try RealtimeServers.url("COURIER_WS_CA_FILE").path)
            configuration.keepalive = nil
            configuration.reconnect = .never
            configuration.connectTimeout = .seconds(3)
            let live = WebSocketClient(
                configuration: configuration, transport: RFC6455Transport.curl(), clock: TestClock(mode: .manual),
                random: { 0.5 })
            let clock = ContinuousClock()
            let started = clock.now
            await live.connect()
            try await eventually("closed") {
                if case .closed = await live.state { return true }
                return false
            }
            let took = started.duration(to: clock.now)
            // The server read the upgrade request: the attempt reached the handshake.
            #expect(try await slowTLS()["requests"] == (before["requests"] ?? 0) + 1)
            #expect(took < .seconds(4), "the attempt took \(took)")
            guard case .connectionFailed = await live.lastFailure else {
                Issue.record("last failure: \(String(describing: await live.lastFailure))")
                return
            }
        }
    }

    // MARK: - Control frames

    @Test func aPingStormIsAnsweredInOrder() async throws {
        let namespace = RealtimeServers.namespace("storm")
        let live = client(try url(namespace, "ping-storm", "n=2000"), clock: TestClock(mode: .manual)) { $0.reconnect = .never }
        await live.connect()
        try await eventually("closed") { self.isClosed(await live.state) }
        #expect(await live.state == .closed(code: .normalClosure, reason: "storm over"))
        let stats = try await stats(namespace)
        #expect((stats["pongCounts"] as? [String: Int])?["ping-storm"] == 2000)
        #expect((stats["pongsInOrder"] as? [String: Bool])?["ping-storm"] == true)
        try await eventually("server saw the Close") { (try? await self.closes(namespace, "ping-storm")) == ["1000"] }
    }

    @Test func twoCloseFramesInOneReadAreAnsweredOnce() async throws {
        for _ in 0..<10 {
            let namespace = RealtimeServers.namespace("double-close")
            let live = client(try url(namespace, "double-close"), clock: TestClock(mode: .manual)) { $0.reconnect = .never }
            await live.connect()
            try await eventually("closed") { self.isClosed(await live.state) }
            #expect(await live.state == .closed(code: .goingAway, reason: "first"))
            try await eventually("server saw the end") { (try? await self.closes(namespace, "double-close"))?.last == "end" }
            #expect(try await closes(namespace, "double-close") == ["1001", "end"])
        }
    }

    // MARK: - A slow app

    /// The bytes the `flood` route handed to its socket so far.
    private func floodSent(_ namespace: String) async throws -> Int {
        ((try await stats(namespace))["floodSent"] as? [String: Int])?["flood"] ?? 0
    }

    /// The server floods 400 × 256 KiB (100 MiB) while the app takes one message and pauses: the
    /// server gets no further than what the client's buffers (1 MiB limit) and the two kernels'
    /// socket buffers hold; once the app reads again, every message arrives, in order.
    @Test func aSlowAppHoldsAFloodingServerBackOverTCP() async throws {
        let namespace = RealtimeServers.namespace("flood")
        let (count, size) = (400, 256 * 1024)
        let live = client(try url(namespace, "flood", "n=\(count)&size=\(size)"), clock: TestClock(mode: .manual)) {
            $0.bufferLimit = 1 << 20
            $0.reconnect = .never
        }
        let messages = live.messages()
        await live.connect()
        var iterator = messages.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.byteCount == size)
        // The app pauses: the server's count stops growing (the same twice, 200 ms apart).
        try await eventually("the server to be held back") {
            let before = (try? await self.floodSent(namespace)) ?? -1
            try? await Task.sleep(for: .milliseconds(200))
            return before == (try? await self.floodSent(namespace))
        }
        let held = try await floodSent(namespace)
        #expect(held < count * size / 2, "the server wrote \(held) bytes of \(count * size) while the app paused")
        for index in 1..<count {
            guard case .data(let data) = await iterator.next() else {
                Issue.record("message \(index) missing; state \(await live.state)")
                return
            }
            #expect(data.count == size && data.first == UInt8(index % 256) && data.last == UInt8(index % 256), "message \(index)")
        }
        // The server counts a piece once its drain returns, which can be after the client read it.
        try await eventually("the server counted every byte") { (try? await self.floodSent(namespace)) ?? 0 >= count * size }
        await live.close()
        #expect(await live.state == .closed(code: .normalClosure, reason: ""))
    }

    // MARK: - Too-big messages

    @Test func aTooBigMessageReaches1009AtTheFaultServer() async throws {
        let namespace = RealtimeServers.namespace("too-big")
        let live = client(try url(namespace, "too-big", "size=\(4 << 20)"), clock: TestClock(mode: .manual)) {
            $0.maximumMessageSize = 64 * 1024
            $0.reconnect = .never
        }
        await live.connect()
        try await eventually("closed") { self.isClosed(await live.state) }
        guard case .closed(code: .messageTooBig, _) = await live.state else {
            Issue.record("expected 1009, got \(await live.state)")
            return
        }
        try await eventually("server saw a Close") { (try? await self.closes(namespace, "too-big"))?.isEmpty == false }
        #expect(try await closes(namespace, "too-big") == ["1009"])
    }

    /// The same against the `websockets` server: it echoes each message doubled, over the limit.
    @Test func aTooBigMessageReaches1009AtTheWebsocketsServer() async throws {
        let namespace = RealtimeServers.namespace("big-echo")
        var configuration = WebSocketClient.Configuration(
            url: try RealtimeServers.url("COURIER_WS_URL").appendingPathComponent("ns/\(namespace)/big-echo"))
        configuration.keepalive = nil
        configuration.reconnect = .never
        configuration.maximumMessageSize = 100_000
        let live = WebSocketClient(
            configuration: configuration, transport: RFC6455Transport.curl(), clock: TestClock(mode: .manual), random: { 0.5 })
        await live.connect()
        try await eventually("open") { await live.state == .open }
        try await live.send(data: Data(count: 60_000))  // echoed as 120,000 bytes
        try await eventually("closed") { self.isClosed(await live.state) }
        guard case .closed(code: .messageTooBig, _) = await live.state else {
            Issue.record("expected 1009, got \(await live.state)")
            return
        }
        try await eventually("server recorded the close") {
            let stats = try? await RealtimeServers.control(namespace, "action=stats")
            return (stats?["closeCodes"] as? [Any])?.isEmpty == false
        }
        let stats = try await RealtimeServers.control(namespace, "action=stats")
        #expect((stats["closeCodes"] as? [Any])?.map { "\($0)" } == ["1009"])
    }

    /// The server never answers the Close, so close() waits for its close timeout. Meanwhile the
    /// app calls connect(), then close() again: the session ends closed after one handshake.
    @Test func theLastCloseWinsOverAConnectWaitingForAnUnansweredClose() async throws {
        let namespace = RealtimeServers.namespace("last-close")
        let connectionClock = TestClock(mode: .manual)
        let client = client(try url(namespace, "stop-reading"), clock: TestClock(mode: .manual), connectionClock: connectionClock)
        await client.connect()
        try await eventually("open") { await client.state == .open }
        let firstClose = Task { await client.close() }
        try await connectionClock.waitForSleepers(count: 1)  // the close timeout runs
        let reconnect = Task { await client.connect() }
        try await eventually("connect waits") { await client.isConnectPending }
        let lastClose = Task { await client.close() }
        try await eventually("close called") { await !client.isConnectPending }
        let done = Locked(false)
        let all = Task {
            for task in [firstClose, reconnect, lastClose] { await task.value }
            done.set(true)
        }
        try await advance(connectionClock, by: .seconds(5)) { done.current }  // no answer: the close times out
        await all.value
        let state = await client.state
        #expect(try await handshakes(namespace, "stop-reading") == 1, "state \(state)")
        #expect(isClosed(state), "state after the last close(): \(state)")
    }
}
