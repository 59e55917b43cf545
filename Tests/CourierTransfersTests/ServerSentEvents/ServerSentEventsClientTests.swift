import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

extension ServerSentEventsTests {
    /// The reconnecting feed against a scripted transport and a test clock (no real sleeps).
    @Suite struct ClientTests {
        typealias Event = ServerSentEvent
        static let noJitter = ServerSentEvents.Configuration(reconnect: .init(jitter: .none))
        static let feed = Request<Void>.get("/prices")

        @Test func reconnectsAfterACleanEndAndANetworkErrorSendingLastEventIDAndWaitingTheServersRetry() async {
            let transport = ScriptedTransport([
                .stream(chunks: ["retry: 1500\nid: 1\nda", "ta: a\n\n"]),
                .stream(chunks: ["id: 2\ndata: b\n\n", "id: 3\ndata: c\n"], then: .fail(URLError(.networkConnectionLost))),
            ])
            let clock = TestClock(mode: .manual)
            let feed = ServerSentEventsTests.client(transport, clock: clock).events(Self.feed, configuration: Self.noJitter)
            let states = ServerSentEventsTests.drive(feed, clock: clock)
            let (events, error) = await ServerSentEventsTests.drain(feed)

            #expect(error == nil)
            #expect(
                events == [Event(data: "a", lastEventID: "1", retry: .milliseconds(1500)), Event(data: "b", lastEventID: "2")])
            #expect(transport.requests.count == 3)  // the third got 204: no more
            #expect(transport.header("Last-Event-ID", ofConnection: 0) == nil)
            #expect(transport.header("Last-Event-ID", ofConnection: 1) == "1")
            #expect(transport.header("Last-Event-ID", ofConnection: 2) == "2")  // "3" never completed
            #expect(transport.header("Accept", ofConnection: 0) == "text/event-stream")
            // The server's retry (1.5 s), doubled for the second failure in a row.
            #expect(feed.lastEventID == "2")
            let seen = await states.value
            #expect(ServerSentEventsTests.delays(seen) == [.milliseconds(1500), .seconds(3)])
            #expect(
                seen == [
                    .connecting, .open, .reconnecting(attempt: 1, delay: .milliseconds(1500)), .connecting, .open,
                    .reconnecting(attempt: 2, delay: .seconds(3)), .connecting, .closed,
                ])
        }

        /// A consumer that fell behind a transport that cannot pause (the body fails with
        /// `streamBufferOverflow`) gets the rest after a reconnect that resumes with `Last-Event-ID`.
        @Test func aBufferOverflowReconnectsAndResumesAfterTheLastDeliveredEvent() async {
            let transport = ScriptedTransport([
                .stream(chunks: ["id: 1\ndata: a\n\n", "id: 2\nda"], then: .fail(NetworkError.streamBufferOverflow(limit: 8))),
                .stream(chunks: ["id: 2\ndata: b\n\n"]),
            ])
            let clock = TestClock(mode: .manual)
            let feed = ServerSentEventsTests.client(transport, clock: clock).events(Self.feed, configuration: Self.noJitter)
            _ = ServerSentEventsTests.drive(feed, clock: clock)
            let (events, error) = await ServerSentEventsTests.drain(feed)
            #expect(error == nil)
            #expect(events.map { $0.data } == ["a", "b"])
            #expect(transport.header("Last-Event-ID", ofConnection: 1) == "1")
        }

        /// A store that fails its first read with `error`, then reads `tokens`.
        final class StoreFailingOnce: TokenStore {
            let inner: InMemoryTokenStore
            let error: Locked<TokenStoreError?>
            let sticky: Bool
            init(_ tokens: AuthTokens, _ error: TokenStoreError, sticky: Bool = false) {
                inner = InMemoryTokenStore(tokens)
                self.error = Locked(error)
                self.sticky = sticky
            }
            func read() throws -> AuthTokens? {
                if let failure = error.withLock({ error -> TokenStoreError? in
                    defer { if !sticky { error = nil } }
                    return error
                }) {
                    throw failure
                }
                return inner.read()
            }
            func write(_ tokens: AuthTokens) throws { inner.write(tokens) }
            func clear() throws { inner.clear() }
        }

        static func signedInClient(_ transport: ScriptedTransport, clock: TestClock, store: some TokenStore) -> APIClient {
            let tokens = TokenManager(
                store: store, transport: StubTransport { _ in throw URLError(.badServerResponse) },
                grant: .oauth2(tokenURL: URL(string: "https://auth.test/token")!))
            return ServerSentEventsTests.client(transport, clock: clock, interceptors: .standard(tokenManager: tokens))
        }

        /// A reconnect while the device is locked cannot read the Keychain; after the backoff it
        /// can: the feed goes on, with the token, instead of ending with the store's error.
        @Test func aTokenStoreThatCannotBeReadYetReconnectsAfterTheBackoff() async {
            let transport = ScriptedTransport([.stream(chunks: ["data: a\n\n"])])
            let clock = TestClock(mode: .manual)
            let store = StoreFailingOnce(
                AuthTokens(accessToken: "a1", refreshToken: "r1"), .keychain(operation: "read", status: -25308))
            let feed = Self.signedInClient(transport, clock: clock, store: store).events(
                Request<Void>.get("/prices", policy: .authorizedRead), configuration: Self.noJitter)
            _ = ServerSentEventsTests.drive(feed, clock: clock)
            let (events, error) = await ServerSentEventsTests.drain(feed)
            #expect(error == nil)
            #expect(events.map(\.data) == ["a"])
            #expect(transport.header("Authorization", ofConnection: 0) == "Bearer a1")
        }

        /// A store holding something other than tokens reads the same after any wait: the feed
        /// ends with the store's error and sends nothing.
        @Test func aCorruptedTokenStoreEndsTheFeed() async {
            let transport = ScriptedTransport([.stream(chunks: ["data: a\n\n"])])
            let clock = TestClock(mode: .manual)
            let store = StoreFailingOnce(
                AuthTokens(accessToken: "a1", refreshToken: "r1"), .corrupted("not a token object"), sticky: true)
            let feed = Self.signedInClient(transport, clock: clock, store: store).events(
                Request<Void>.get("/prices", policy: .authorizedRead), configuration: Self.noJitter)
            _ = ServerSentEventsTests.drive(feed, clock: clock)
            let (events, error) = await ServerSentEventsTests.drain(feed)
            #expect(error?.kind == .tokenStoreFailed)
            #expect(events.isEmpty)
            #expect(transport.requests.isEmpty)
        }

        @Test func theBackoffResetsOnlyAfterAConnectionStayedUpForTheThreshold() async {
            let clock = TestClock(mode: .manual)
            // Connections 0 and 1 drop at once; connection 2 stays up 11 s (threshold 10 s).
            let transport = ScriptedTransport(
                [
                    .stream(chunks: ["data: a\n\n"]), .stream(chunks: ["data: b\n\n"]), .stream(chunks: ["data: c\n\n"]),
                    .stream(chunks: ["data: d\n\n"]),
                ],
                beforeEnd: { if $0 == 2 { clock.advance(by: .seconds(11)) } })
            let feed = ServerSentEventsTests.client(transport, clock: clock).events(Self.feed, configuration: Self.noJitter)
            let states = ServerSentEventsTests.drive(feed, clock: clock)
            let (events, error) = await ServerSentEventsTests.drain(feed)
            #expect(error == nil)
            #expect(events.map(\.data) == ["a", "b", "c", "d"])
            #expect(ServerSentEventsTests.delays(await states.value) == [.seconds(3), .seconds(6), .seconds(3), .seconds(6)])
        }

        @Test func afterRetryZeroTheReconnectsInARowStillBackOff() async {
            // `retry: 0` asks for an immediate reconnect; a server that then stays down must not
            // be called in a tight loop.
            var script: [ScriptedTransport.Connection] = [.stream(chunks: ["retry: 0\ndata: a\n\n"])]
            script += Array(repeating: .failure(URLError(.cannotConnectToHost)), count: 4)
            script.append(.stream(chunks: ["data: z\n\n"]))
            let transport = ScriptedTransport(script)
            // Each sleep moves the clock by itself (a zero-length one registers no sleeper to drive).
            let clock = TestClock(mode: .advancesOnSleep)
            let feed = ServerSentEventsTests.client(transport, clock: clock).events(Self.feed, configuration: Self.noJitter)
            let stream = feed.states()
            let states = Task {
                var seen: [ServerSentEvents.ConnectionState] = []
                for await state in stream { seen.append(state) }
                return seen
            }
            let (events, _) = await ServerSentEventsTests.drain(feed)
            let delays = ServerSentEventsTests.delays(await states.value)
            #expect(events.map(\.data) == ["a", "z"])
            #expect(delays.prefix(5) == [.zero, .milliseconds(200), .milliseconds(400), .milliseconds(800), .milliseconds(1600)])
        }

        @Test func aHostTheClientHoldsBackIsReconnectedToAfterItsWait() async {
            // The server is down for a while: the client's circuit breaker opens after three failed
            // connects and answers `backendUnavailable` without sending. The feed waits out the
            // breaker's cool-down and reconnects, instead of ending.
            var script: [ScriptedTransport.Connection] = [.stream(chunks: ["data: a\n\n"])]
            script += Array(repeating: .failure(URLError(.cannotConnectToHost)), count: 3)
            script.append(.stream(chunks: ["data: z\n\n"]))
            let transport = ScriptedTransport(script)
            let clock = TestClock(mode: .manual)
            let breaker = CircuitBreaker(
                consecutiveFailures: 3, coolDown: Backoff(initialDelay: .seconds(100), maximumDelay: .seconds(200), jitter: .none)
            )
            let retry = RetryInterceptor(clock: clock, random: { 0 }, maximumRetries: 0, budget: nil, circuitBreaker: breaker)
            let feed = ServerSentEventsTests.client(transport, clock: clock, interceptors: [retry])
                .events(Self.feed, configuration: Self.noJitter)
            let states = ServerSentEventsTests.drive(feed, clock: clock)
            let (events, error) = await ServerSentEventsTests.drain(feed)
            #expect(error == nil)
            #expect(events.map(\.data) == ["a", "z"])
            #expect(transport.requests.count >= 5, "a, three failures, z: the held-back connect sent nothing")
            let delays = ServerSentEventsTests.delays(await states.value)
            // The feed's own delays stop at 30 s; the breaker holds the host for the rest of 100 s.
            #expect(delays.contains { $0 > .seconds(30) }, "the breaker's wait: \(delays)")
        }

        @Test func aNetworkErrorBeforeTheHeadReconnects() async {
            let transport = ScriptedTransport([.failure(URLError(.cannotConnectToHost)), .stream(chunks: ["data: a\n\n"])])
            let clock = TestClock(mode: .manual)
            let feed = ServerSentEventsTests.client(transport, clock: clock).events(Self.feed, configuration: Self.noJitter)
            let states = ServerSentEventsTests.drive(feed, clock: clock)
            let (events, error) = await ServerSentEventsTests.drain(feed)
            #expect(error == nil)
            #expect(events == [Event(data: "a")])
            #expect(transport.requests.count == 3)
            #expect(ServerSentEventsTests.delays(await states.value) == [.seconds(3), .seconds(6)])
        }

        /// A redirect loop, a reply that is not HTTP or a refused certificate would meet the next
        /// connection too: the feed ends with it instead of reconnecting forever (an outside
        /// tester's loop drew 189 requests in 30 s and never reached the consumer).
        @Test(arguments: [URLError.Code.httpTooManyRedirects, .badServerResponse, .serverCertificateUntrusted])
        func aFailureTheNextConnectionWouldMeetEndsTheFeed(code: URLError.Code) async {
            let transport = ScriptedTransport([.failure(URLError(code)), .stream(chunks: ["data: a\n\n"])])
            let feed = ServerSentEventsTests.client(transport, clock: TestClock(mode: .manual)).events(Self.feed)
            let (events, error) = await ServerSentEventsTests.drain(feed)
            #expect(events.isEmpty)
            #expect(error == .transport(URLError(code)))
            #expect(transport.requests.count == 1)
            #expect(feed.state == .closed)
        }

        @Test func a204StopsTheFeedAtOnce() async {
            let transport = ScriptedTransport([])
            let clock = TestClock(mode: .manual)
            let feed = ServerSentEventsTests.client(transport, clock: clock).events(Self.feed)
            let states = ServerSentEventsTests.drive(feed, clock: clock)
            let (events, error) = await ServerSentEventsTests.drain(feed)
            #expect(events.isEmpty && error == nil)
            #expect(transport.requests.count == 1)
            #expect(await states.value == [.connecting, .closed])  // no reconnect wait
            #expect(feed.state == .closed)
        }

        @Test(arguments: [(500, NetworkError.Kind.server), (404, .notFound), (401, .unauthorized), (403, .forbidden)])
        func aStatusOutsideTheAcceptedOnesFailsWithoutReconnecting(status: Int, kind: NetworkError.Kind) async {
            let transport = ScriptedTransport([.stream(status: status, contentType: "application/json", chunks: ["{}"])])
            let feed = ServerSentEventsTests.client(transport, clock: TestClock(mode: .manual)).events(Self.feed)
            let (events, error) = await ServerSentEventsTests.drain(feed)
            #expect(events.isEmpty)
            #expect(error?.kind == kind)
            #expect(transport.requests.count == 1)
            #expect(feed.state == .closed)
        }

        @Test func aWrongContentTypeFailsWithATypedErrorAndTheSnippet() async throws {
            let transport = ScriptedTransport([
                .stream(contentType: "text/html; charset=utf-8", chunks: ["<html>Sign in to the Wi-Fi</html>"])
            ])
            let feed = ServerSentEventsTests.client(transport, clock: TestClock(mode: .manual)).events(Self.feed)
            let (_, error) = await ServerSentEventsTests.drain(feed)
            guard case .decoding(let failure)? = error else {
                Issue.record("expected a decoding error, got \(String(describing: error))")
                return
            }
            #expect(failure.kind == .unexpectedContentType)
            #expect(failure.underlying as? ServerSentEventError == .unexpectedContentType("text/html"))
            #expect(failure.bodySnippet.contains("Sign in to the Wi-Fi"))
            #expect(transport.requests.count == 1)
        }

        @Test func aFeedCancelledWhileItReadsAWrongContentTypesSnippetEndsCancelled() async throws {
            // The snippet read waits for the body's first bytes; the consumer walks away meanwhile.
            let (reading, signal) = AsyncStream.makeStream(of: Void.self)
            let transport = ScriptedTransport(
                [.stream(contentType: "text/html", chunks: [], then: .hang)], beforeEnd: { _ in signal.yield() })
            let feed = ServerSentEventsTests.client(transport, clock: TestClock(mode: .manual)).events(Self.feed)
            let consumer = Task { await ServerSentEventsTests.drain(feed) }
            for await _ in reading { break }
            consumer.cancel()
            let (events, error) = await consumer.value
            #expect(events.isEmpty)
            #expect(error?.kind == .cancelled)
            #expect(transport.requests.count == 1)
        }

        @Test func anEventBeyondTheSizeBoundFailsWithoutReconnecting() async {
            let transport = ScriptedTransport([.stream(chunks: ["data: ok\n\n", "data: " + String(repeating: "x", count: 100)])])
            let configuration = ServerSentEvents.Configuration(maximumEventSize: 64)
            let feed = ServerSentEventsTests.client(transport, clock: TestClock(mode: .manual)).events(
                Self.feed, configuration: configuration)
            let (events, error) = await ServerSentEventsTests.drain(feed)
            #expect(events == [Event(data: "ok")])
            guard case .decoding(let failure)? = error else {
                Issue.record("expected a decoding error, got \(String(describing: error))")
                return
            }
            #expect(failure.kind == .malformedBody)
            #expect(failure.underlying as? ServerSentEventError == .eventTooLarge(limit: 64))
            #expect(transport.requests.count == 1)
        }

        @Test(arguments: [ScriptedTransport.Ending.end, .hang])
        func anEventBeforeAnOversizedOneInTheSameChunkIsDelivered(_ then: ScriptedTransport.Ending) async {
            let transport = ScriptedTransport([
                .stream(chunks: ["id: 1\ndata: ok\n\ndata: " + String(repeating: "x", count: 100)], then: then)
            ])
            let configuration = ServerSentEvents.Configuration(maximumEventSize: 64)
            let feed = ServerSentEventsTests.client(transport, clock: TestClock(mode: .manual)).events(
                Self.feed, configuration: configuration)
            let (events, error) = await ServerSentEventsTests.drain(feed)
            #expect(events == [Event(data: "ok", lastEventID: "1")])
            guard case .decoding(let failure)? = error else {
                Issue.record("expected a decoding error, got \(String(describing: error))")
                return
            }
            #expect(failure.underlying as? ServerSentEventError == .eventTooLarge(limit: 64))
            #expect(transport.requests.count == 1)
        }

        @Test func theFeedsLastEventIDIsThatOfTheLastEventHandedOut() async throws {
            let transport = ScriptedTransport([
                .stream(chunks: ["id: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\n", "id: 4\n\n"], then: .hang)
            ])
            let feed = ServerSentEventsTests.client(transport, clock: TestClock(mode: .manual)).events(Self.feed)
            var iterator = feed.makeAsyncIterator()
            #expect(try await iterator.next()?.lastEventID == "1")
            #expect(feed.lastEventID == "1", "a later feed resumed from here must not skip events 2 and 3")
            #expect(try await iterator.next()?.lastEventID == "2")
            #expect(feed.lastEventID == "2")
            #expect(try await iterator.next()?.lastEventID == "3")
            #expect(feed.lastEventID == "3")
            // A block with an id and no data moves it too, once read.
            let reading = Task { [iterator] in
                var iterator = iterator
                return try await iterator.next()
            }
            for _ in 0..<2000 where feed.lastEventID != "4" { try await Task.sleep(for: .milliseconds(5)) }
            #expect(feed.lastEventID == "4")
            reading.cancel()
            _ = await reading.result
        }

        @Test func theAttemptsRunOutWithTheLastError() async {
            let lost = URLError(.networkConnectionLost)
            let transport = ScriptedTransport([.failure(lost), .failure(lost), .failure(lost), .failure(lost)])
            let clock = TestClock(mode: .manual)
            let configuration = ServerSentEvents.Configuration(reconnect: .init(jitter: .none, maximumAttempts: 2))
            let feed = ServerSentEventsTests.client(transport, clock: clock).events(Self.feed, configuration: configuration)
            let states = ServerSentEventsTests.drive(feed, clock: clock)
            let (_, error) = await ServerSentEventsTests.drain(feed)
            #expect(error?.kind == .transport)
            #expect(transport.requests.count == 3)  // the first connection and 2 reconnects
            #expect(ServerSentEventsTests.delays(await states.value) == [.seconds(3), .seconds(6)])
        }

        @Test func neverReconnectEndsAfterACleanEnd() async {
            let transport = ScriptedTransport([.stream(chunks: ["data: a\n\n"])])
            let configuration = ServerSentEvents.Configuration(reconnect: .never)
            let feed = ServerSentEventsTests.client(transport, clock: TestClock(mode: .manual)).events(
                Self.feed, configuration: configuration)
            let (events, error) = await ServerSentEventsTests.drain(feed)
            #expect(events == [Event(data: "a")] && error == nil)
            #expect(transport.requests.count == 1)
        }

        @Test func theConfiguredLastEventIDIsSentOnTheFirstConnection() async {
            let transport = ScriptedTransport([.stream(chunks: ["data: a\n\n"])])
            let configuration = ServerSentEvents.Configuration(reconnect: .init(jitter: .none), lastEventID: "41")
            let clock = TestClock(mode: .manual)
            let feed = ServerSentEventsTests.client(transport, clock: clock).events(Self.feed, configuration: configuration)
            #expect(feed.lastEventID == "41")
            let states = ServerSentEventsTests.drive(feed, clock: clock)
            let (events, _) = await ServerSentEventsTests.drain(feed)
            _ = await states.value
            #expect(events == [Event(data: "a", lastEventID: "41")])
            #expect(transport.header("Last-Event-ID", ofConnection: 0) == "41")
            #expect(transport.header("Last-Event-ID", ofConnection: 1) == "41")
        }

        @Test func anEndpointsOwnAcceptAndHeadersAreKept() async {
            let transport = ScriptedTransport([])
            let request = Request<Void>.get("/prices", headers: ["Accept": "text/event-stream; q=1", "X-Feed": "eu"])
            _ = await ServerSentEventsTests.drain(
                ServerSentEventsTests.client(transport, clock: TestClock(mode: .manual)).events(request))
            #expect(transport.header("Accept", ofConnection: 0) == "text/event-stream; q=1")
            #expect(transport.header("X-Feed", ofConnection: 0) == "eu")
        }

        @Test func aFeedIsIteratedOnce() async {
            let transport = ScriptedTransport([])
            let feed = ServerSentEventsTests.client(transport, clock: TestClock(mode: .manual)).events(Self.feed)
            _ = await ServerSentEventsTests.drain(feed)
            let (_, error) = await ServerSentEventsTests.drain(feed)
            #expect(error?.kind == .invalidRequest)
            #expect(transport.requests.count == 1)
        }

        @Test func cancellingTheConsumerClosesTheFeedWithoutReconnecting() async {
            let transport = ScriptedTransport([.stream(chunks: ["data: a\n\n"], then: .hang)])
            let clock = TestClock(mode: .manual)
            let feed = ServerSentEventsTests.client(transport, clock: clock).events(Self.feed)
            let first = AsyncStream.makeStream(of: Void.self)
            let consumer = Task {
                var iterator = feed.makeAsyncIterator()
                _ = try await iterator.next()
                first.continuation.yield()
                return try await iterator.next()
            }
            for await _ in first.stream { break }
            consumer.cancel()
            let result = await consumer.result
            #expect(throws: NetworkError.cancelled) { try result.get() }
            #expect(feed.state == .closed)
            #expect(transport.requests.count == 1)
        }

        @Test func stoppingTheIterationClosesTheFeed() async throws {
            let transport = ScriptedTransport([.stream(chunks: ["data: a\n\ndata: b\n\n"], then: .hang)])
            let clock = TestClock(mode: .manual)
            let feed = ServerSentEventsTests.client(transport, clock: clock).events(Self.feed)
            let states = ServerSentEventsTests.drive(feed, clock: clock)
            for try await _ in feed { break }
            #expect(await states.value == [.connecting, .open, .closed])
        }

        @Test func everyConnectionIsItsOwnCallThroughThePipeline() async {
            let transport = ScriptedTransport([.stream(chunks: ["id: 1\ndata: a\n\n"])])
            let clock = TestClock(mode: .manual)
            let client = ServerSentEventsTests.client(transport, clock: clock, interceptors: [RequestIDInterceptor()])
            let feed = client.events(Self.feed, configuration: Self.noJitter)
            let states = ServerSentEventsTests.drive(feed, clock: clock)
            _ = await ServerSentEventsTests.drain(feed)
            _ = await states.value
            let ids = (0..<2).compactMap { transport.header("X-Request-ID", ofConnection: $0) }
            #expect(ids.count == 2 && Set(ids).count == 2)  // the reconnect is a new call with a new ID
        }

        @Test func aCacheablyMarkedFeedIsNeverAnsweredFromTheHTTPCache() async {
            // Short, clean, cacheable-looking responses (max-age=600): were one stored, the
            // reconnect would replay "a" from the cache instead of reaching the server.
            let transport = ScriptedTransport([
                .stream(chunks: ["id: 1\ndata: a\n\n"]), .stream(chunks: ["id: 2\ndata: b\n\n"]),
            ])
            let clock = TestClock(mode: .manual)
            let client = ServerSentEventsTests.client(
                transport, clock: clock, interceptors: .standard(cache: HTTPCache(storage: MemoryCacheStorage())))
            let feed = client.events(Self.feed, configuration: Self.noJitter)
            let states = ServerSentEventsTests.drive(feed, clock: clock)
            let (events, error) = await ServerSentEventsTests.drain(feed)
            _ = await states.value
            #expect(error == nil)
            #expect(events.map { $0.data } == ["a", "b"])
            #expect(transport.requests.count == 3)

            // Control: the same response through a plain streamed call is stored and served
            // again, so the cache in this pipeline would have replayed the feed.
            let plain = ScriptedTransport([.stream(chunks: ["id: 1\ndata: a\n\n"])])
            let cached = ServerSentEventsTests.client(
                plain, clock: TestClock(mode: .manual), interceptors: .standard(cache: HTTPCache(storage: MemoryCacheStorage())))
            for _ in 0..<2 { _ = try? await cached.stream(Self.feed).body.collect(upTo: 1024) }
            #expect(plain.requests.count == 1)
        }

        @Test(arguments: [
            (
                ServerSentEvents.ConnectionState.reconnecting(attempt: 1, delay: .milliseconds(554)),
                "reconnecting in 0.55 s (attempt 1)"
            ),
            (.reconnecting(attempt: 3, delay: .seconds(3)), "reconnecting in 3.00 s (attempt 3)"),
            (.reconnecting(attempt: 2, delay: .milliseconds(1005)), "reconnecting in 1.01 s (attempt 2)"),
            (.connecting, "connecting"), (.closed, "closed"),
        ])
        func statesDescribeThemselvesForABanner(state: ServerSentEvents.ConnectionState, text: String) {
            #expect(state.description == text)
        }

        // MARK: Delay arithmetic

        @Test(
            arguments: [
                (1, nil, 0.0, Duration.seconds(1)), (2, nil, 0.0, .seconds(2)), (3, nil, 0.0, .seconds(4)),
                (4, nil, 0.0, .seconds(4)), (64, nil, 0.0, .seconds(4)), (1, nil, 1.0, .milliseconds(1500)),
                (3, nil, 0.5, .seconds(5)), (1, .milliseconds(500), 0.0, .milliseconds(500)),
                (2, .milliseconds(500), 0.0, .seconds(1)), (1, .seconds(10), 0.0, .seconds(10)),
                (5, .seconds(10), 0.0, .seconds(10)),
                (1, .zero, 1.0, .zero), (2, .zero, 0.0, .milliseconds(200)), (3, .zero, 0.0, .milliseconds(400)),
            ] as [(Int, Duration?, Double, Duration)])
        func theDelayIsTheServersRetryOrTheDefaultWithBackoffCapAndJitter(
            attempt: Int, serverRetry: Duration?, random: Double, expected: Duration
        ) {
            let policy = ServerSentEvents.ReconnectPolicy(
                initialDelay: .seconds(1), maximumDelay: .seconds(4), jitter: .additive(0.5))
            #expect(policy.delay(forAttempt: attempt, serverRetry: serverRetry, random: random) == expected)
        }

        /// A server's `retry` past the policy's ceiling (`retry: 99999999999999999999999` parses to
        /// `Int64.max` ms, centuries) parks the feed no longer than ``maximumServerRetry``.
        @Test func aServersRetryIsCappedAtTheMaximumServerRetry() {
            let policy = ServerSentEvents.ReconnectPolicy(jitter: .none)
            #expect(policy.maximumServerRetry == .seconds(3600))
            let huge = Duration.milliseconds(Int64.max)
            #expect(policy.delay(forAttempt: 1, serverRetry: huge, random: 0) == .seconds(3600))
            #expect(policy.delay(forAttempt: 5, serverRetry: huge, random: 0) == .seconds(3600))
            var short = policy
            short.maximumServerRetry = .seconds(60)
            #expect(short.delay(forAttempt: 1, serverRetry: .seconds(600), random: 0) == .seconds(60))
            #expect(short.delay(forAttempt: 1, serverRetry: .seconds(10), random: 0) == .seconds(10))
        }

        @Test func thePolicyCarriesTheSharedBackoff() {
            var feed = ServerSentEvents.ReconnectPolicy()
            #expect(feed.backoff == Backoff(initialDelay: .seconds(3), maximumDelay: .seconds(30), jitter: .additive(1.0)))
            feed.maximumDelay = .seconds(10)
            #expect(feed.backoff.maximumDelay == .seconds(10))
        }
    }
}
