import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// Request body progress postpones the call's deadline (`EndpointPolicy.deadline`), on an
    /// injected clock: a transport that reports body bytes through `TransportReporter` as the
    /// built-in ones do.
    @Suite struct UploadDeadline {
        /// A transport that reports `didSend` for every step the test feeds it, then waits for
        /// the response head forever (until cancelled). `reports` counts the reports made.
        private static func reportingTransport(
            steps: AsyncStream<Int64>, reports: Locked<Int>
        ) -> StubTransport {
            StubTransport { _ in
                let reporter = TransportReporter.current
                var total: Int64 = 0
                for await step in steps {
                    total += step
                    reporter?.didSend(total, of: nil)
                    reports.withLock { $0 += 1 }
                }
                return try await CoreFixture.suspendUntilCancelled()
            }
        }

        /// A call sending `body` under `deadline` through a ``reportingTransport(steps:reports:)``
        /// on a manual clock, started and waiting at the transport: feed body bytes with `feed`.
        private struct Started {
            let clock: ManualClock
            let feed: AsyncStream<Int64>.Continuation
            let reports: Locked<Int>
            let stub: StubTransport
            let call: Task<Void, any Error>
        }

        private static func start(path: String, body: RequestBody, deadline: Duration) async throws -> Started {
            let clock = ManualClock()
            let (steps, feed) = AsyncStream.makeStream(of: Int64.self)
            let reports = Locked(0)
            let stub = reportingTransport(steps: steps, reports: reports)
            let client = CoreFixture.client(stub) { $0.clock = clock }
            let request = Request<Void>.post(path, body: body, policy: .standard.with(\.retry, .none).with(\.deadline, deadline))
            let call = Task { try await client.send(request) }
            try await clock.waitForSleepers(1)
            try await CoreFixture.waitUntil("the transport to be reached") { stub.requestCount == 1 }
            return Started(clock: clock, feed: feed, reports: reports, stub: stub, call: call)
        }

        /// Whether `call` ended with Courier's own deadline, `timedOut(nil)`.
        private static func timedOut(_ call: Task<Void, any Error>) async -> Bool {
            guard case .failure(let error as NetworkError) = await call.result, case .timedOut(nil) = error else {
                return false
            }
            return true
        }

        @Test("body bytes sent before the deadline move it: it passes only a full deadline after the last bytes")
        func progressPostponesTheDeadline() async throws {
            let started = try await Self.start(
                path: "/upload", body: .data(Data(count: 100_000), contentType: "application/octet-stream"), deadline: .seconds(5)
            )
            let (clock, feed, reports, stub, call) = (started.clock, started.feed, started.reports, started.stub, started.call)

            clock.advance(by: .seconds(4))
            feed.yield(65_536)
            try await CoreFixture.waitUntil("the first report") { reports.current == 1 }
            // t = 5 s: the original deadline; the body moved at 4 s, so the call goes on until 9 s.
            clock.advance(by: .seconds(1))
            try await clock.waitForSleepers(1)
            #expect(clock.sleeperCount == 1)
            clock.advance(by: .milliseconds(3_999))
            try await clock.waitForSleepers(1)
            // Past the last byte, the wait for the head gets the whole deadline from that byte.
            clock.advance(by: .milliseconds(1))
            #expect(await Self.timedOut(call), "the deadline passes 5 s after the last body bytes")
            #expect(clock.now.offset == .seconds(9))
            #expect(stub.requestCount == 1, "nothing is sent again")
            feed.finish()
        }

        @Test("steady progress keeps an upload alive far beyond its deadline; a stall then ends it one deadline later")
        func steadyProgressThenStall() async throws {
            let body = BodyStream.factory(length: 1_000) { InputStream(data: Data(count: 1_000)) }  // any size
            let started = try await Self.start(
                path: "/upload", body: .stream(body, contentType: "application/octet-stream"), deadline: .seconds(2))
            let (clock, feed, reports, call) = (started.clock, started.feed, started.reports, started.call)
            // 20 s of bytes every second: ten deadlines' worth.
            for second in 1...20 {
                clock.advance(by: .seconds(1))
                feed.yield(10)
                try await CoreFixture.waitUntil("report \(second)") { reports.current == second }
                try await clock.waitForSleepers(1)
            }
            // The stall: 2 s with no bytes.
            clock.advance(by: .milliseconds(1_999))
            try await clock.waitForSleepers(1)
            clock.advance(by: .milliseconds(1))
            #expect(await Self.timedOut(call))
            #expect(clock.now.offset == .seconds(22))
            feed.finish()
        }

        @Test("a retry of an upload is planned against the deadline counted from its last body bytes")
        func retryBudgetCountsFromTheLastBodyBytes() async throws {
            // Deadline 2.5 s on the retry clock: after the first 1 s wait, a 2 s wait fits only in
            // the budget counted from the second attempt's body bytes (1 s + 2.5 s), not in the
            // one counted from the start (2.5 s) — RetryInterceptorTests.
            // waitsCountAgainstTheDeadlineOnTheInjectedClock is the same call without a body.
            let answers = Locked([
                RetryFixture.status(503, retryAfter: "1"), RetryFixture.status(503, retryAfter: "2"), .status(200),
            ])
            let stub = StubTransport { _ in
                TransportReporter.current?.didSend(100_000, of: 100_000)
                return answers.withLock { $0.removeFirst() }
            }
            let clock = TestClock()
            let request = Request<HTTPResponse>(
                method: .put, path: "/things", body: .data(Data(count: 100_000), contentType: "application/octet-stream"),
                policy: .standard.with(\.deadline, .milliseconds(2500))
            ) { response, _ in response }
            let response = try await RetryFixture.client(stub, clock: clock).send(request)
            #expect(response.statusCode == 200)
            #expect(stub.requestCount == 3)
            #expect(clock.sleeps == [.seconds(1), .seconds(2)])
        }

        @Test("a small in-memory body leaves at once: its progress does not move the deadline")
        func smallBodyKeepsThePlainDeadline() async throws {
            let started = try await Self.start(
                path: "/items", body: .data(Data(count: 1_000), contentType: "application/octet-stream"), deadline: .seconds(5))
            let (clock, feed, reports, call) = (started.clock, started.feed, started.reports, started.call)
            clock.advance(by: .seconds(4))
            feed.yield(1_000)
            try await CoreFixture.waitUntil("the report") { reports.current == 1 }
            clock.advance(by: .seconds(1))
            #expect(await Self.timedOut(call))
            #expect(clock.now.offset == .seconds(5))
            feed.finish()
        }
    }
}
