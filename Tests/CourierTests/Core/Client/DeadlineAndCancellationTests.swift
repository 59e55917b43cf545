import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// The policy's total deadline and task cancellation (issue 2, items 5 and 7), on an injected clock.
    @Suite struct DeadlineAndCancellation {
        /// A transport that never answers; it records whether it saw the cancellation.
        private static func hangingTransport(sawCancellation: Locked<Bool>) -> StubTransport {
            StubTransport { _ in
                do {
                    return try await CoreFixture.suspendUntilCancelled(thenThrow: URLError(.cancelled))
                } catch {
                    sawCancellation.set(true)
                    throw error
                }
            }
        }

        @Test("the deadline fires exactly at the policy timeout and cancels the transport")
        func deadlineFires() async throws {
            let clock = ManualClock()
            let sawCancellation = Locked(false)
            let stub = Self.hangingTransport(sawCancellation: sawCancellation)
            let client = CoreFixture.client(stub) { $0.clock = clock }
            let request = Request<Void>.get("/slow").policy(.standard.with(\.deadline, .seconds(5)))
            let call = Task { try await client.send(request) }

            try await clock.waitForSleepers(1)
            try await CoreFixture.waitUntil("the transport to be reached") { stub.requestCount == 1 }
            clock.advance(by: .milliseconds(4_999))
            #expect(clock.sleeperCount == 1, "the deadline must not fire early")
            #expect(!sawCancellation.current)
            clock.advance(by: .milliseconds(1))

            let result = await call.result
            guard case .failure(let error as NetworkError) = result, case .timedOut(let underlying) = error else {
                Issue.record("expected timedOut, got \(result)")
                return
            }
            #expect(underlying == nil, "Courier's own deadline carries no URLError")
            #expect(sawCancellation.current, "the transport task was cancelled when the deadline passed")
            #expect(stub.requestCount == 1)
        }

        /// The transport's idle timeout is a backstop one second past the deadline; on a loaded
        /// machine the deadline's timer (a task on the pool) can fire after it. Measured before:
        /// the call failed with `timedOut(URLError -1001)` — words that differ by transport — in
        /// about 1 of 10 back-to-back runs of TransportParityTests.
        @Test(
            "a transport timeout once the deadline's time has passed is the deadline's timedOut(nil); before it, the transport's",
            arguments: [6, 2])
        func transportTimeoutPastTheDeadline(secondsInTransport: Int) async throws {
            let clock = ManualClock()
            let stub = StubTransport { _ in
                clock.advance(by: .seconds(secondsInTransport))  // the deadline's timer has not run yet
                throw URLError(.timedOut)
            }
            let client = CoreFixture.client(stub) { $0.clock = clock }
            let request = Request<Void>.get("/slow").policy(.standard.with(\.deadline, .seconds(5)).with(\.retry, .none))
            let result = await Task { try await client.send(request) }.result
            guard case .failure(let error as NetworkError) = result, case .timedOut(let underlying) = error else {
                Issue.record("expected timedOut, got \(result)")
                return
            }
            if secondsInTransport > 5 {
                #expect(underlying == nil, "past the deadline: the deadline's timeout, \(error)")
            } else {
                #expect(underlying?.code == .timedOut, "within the deadline: the transport's own, \(error)")
            }
            #expect(stub.requestCount == 1)
        }

        @Test("a response before the deadline wins; the expired registration later fires nothing")
        func responseBeforeDeadline() async throws {
            let clock = ManualClock()
            let stub = StubTransport(responses: [.json(#"{"id":1,"name":"A"}"#), .json(#"{"id":2,"name":"B"}"#)])
            let client = CoreFixture.client(stub) { $0.clock = clock }
            let item = try await client.send(Request<CoreFixture.Item>.get("/items/1"))
            #expect(item.id == 1)
            #expect(clock.now.offset == .zero)
            // Passing the old deadline neither fails anything nor leaves a sleeper behind…
            clock.advance(by: .seconds(61))
            try await CoreFixture.waitUntil("the idle scheduler to stop sleeping") { clock.sleeperCount == 0 }
            // …and the client still enforces deadlines for later calls.
            #expect(try await client.send(Request<CoreFixture.Item>.get("/items/2")).id == 2)
        }

        @Test("concurrent calls with different deadlines each time out at their own deadline")
        func independentDeadlines() async throws {
            let clock = ManualClock()
            let stub = StubTransport { _ in try await CoreFixture.suspendUntilCancelled() }
            let client = CoreFixture.client(stub) { $0.clock = clock }
            let finished = Locked<[String]>([])
            func start(_ name: String, timeout: Duration) -> Task<Void, Never> {
                Task {
                    do {
                        try await client.send(Request<Void>.get("/\(name)").policy(.standard.with(\.deadline, timeout)))
                        finished.withLock { $0.append("\(name): value") }
                    } catch NetworkError.timedOut(nil) {
                        finished.withLock { $0.append("\(name): timedOut") }
                    } catch {
                        finished.withLock { $0.append("\(name): \(error)") }
                    }
                }
            }
            let long = start("long", timeout: .seconds(5))
            try await CoreFixture.waitUntil("the long call to reach the transport") { stub.requestCount == 1 }
            let short = start("short", timeout: .seconds(2))
            try await CoreFixture.waitUntil("the short call to reach the transport") { stub.requestCount == 2 }

            clock.advance(by: .seconds(2))
            await short.value
            #expect(finished.current == ["short: timedOut"])
            clock.advance(by: .milliseconds(2_999))
            try await CoreFixture.waitUntil("the scheduler to sleep towards the long deadline") { clock.sleeperCount >= 1 }
            #expect(finished.current == ["short: timedOut"], "the long call must not expire early")
            clock.advance(by: .milliseconds(1))
            await long.value
            #expect(finished.current == ["short: timedOut", "long: timedOut"])
        }

        @Test("cancelling the caller gives .cancelled, not .timedOut, and cancels the transport")
        func callerCancellation() async throws {
            let clock = ManualClock()
            let sawCancellation = Locked(false)
            let stub = Self.hangingTransport(sawCancellation: sawCancellation)
            let client = CoreFixture.client(stub) { $0.clock = clock }
            let call = Task { try await client.send(Request<Void>.get("/slow")) }
            try await clock.waitForSleepers(1)
            try await CoreFixture.waitUntil("the transport to be reached") { stub.requestCount == 1 }
            call.cancel()
            let result = await call.result
            guard case .failure(let error as NetworkError) = result else {
                Issue.record("expected a NetworkError, got \(result)")
                return
            }
            #expect(error.isCancellation)
            #expect(sawCancellation.current)
        }

        @Test(
            "a deadline too large for the clock (\"no deadline\") neither traps nor fires",
            arguments: [
                Duration.seconds(Int64.max), .seconds(1e20), .seconds(-Int64.max),
            ])
        func hugeDeadline(timeout: Duration) async throws {
            let stub = StubTransport { _ in
                try await Task.sleep(for: .milliseconds(50))  // the deadline's sleeper starts meanwhile
                return .status(204)
            }
            let client = CoreFixture.client(stub)  // ContinuousClock: the real conversion that trapped
            let result = await Task { try await client.send(Request<Void>.get("/x").policy(.standard.with(\.deadline, timeout))) }
                .result
            if timeout > .zero {
                #expect(throws: Never.self) { try result.get() }
            } else if case .failure(let error) = result {
                // An already-expired deadline races the 50 ms answer; either outcome is fine, a trap is not.
                guard case NetworkError.timedOut(nil) = error else {
                    Issue.record("expected success or .timedOut(nil), got \(error)")
                    return
                }
            }
            try await Task.sleep(for: .milliseconds(20))  // let a sleeper reach Clock.sleep(until:)
        }

        @Test("a call cancelled before it starts sends nothing")
        func cancelledBeforeStart() async throws {
            let stub = StubTransport { _ in .status(204) }
            let client = CoreFixture.client(stub)
            let call = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.send(Request<Void>.get("/x"))
            }
            let result = await call.result
            guard case .failure(let error as NetworkError) = result else {
                Issue.record("expected a NetworkError, got \(result)")
                return
            }
            #expect(error.isCancellation)
            #expect(stub.requestCount == 0)
        }

        @Test("the deadline covers every attempt of the call, not each attempt")
        func deadlineCoversRetries() async throws {
            struct RetryForever: Interceptor {
                func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
                    while true {
                        let response = try await next(request)
                        if response.statusCode != 503 { return response }
                    }
                }
            }
            let clock = ManualClock()
            let attempts = Locked(0)
            let stub = StubTransport { _ in
                let attempt = attempts.withLock {
                    $0 += 1
                    return $0
                }
                if attempt < 3 { return .status(503) }
                return try await CoreFixture.suspendUntilCancelled()
            }
            let client = CoreFixture.client(stub) {
                $0.clock = clock
                $0.interceptors = [RetryForever()]
            }
            let call = Task { try await client.send(Request<Void>.get("/x").policy(.standard.with(\.deadline, .seconds(2)))) }
            try await clock.waitForSleepers(1)
            try await CoreFixture.waitUntil("the third attempt") { stub.requestCount == 3 }
            clock.advance(by: .seconds(2))
            let result = await call.result
            guard case .failure(NetworkError.timedOut(nil)) = result else {
                Issue.record("expected timedOut, got \(result)")
                return
            }
            #expect(stub.requestCount == 3)
        }

        @Test("an idle timeout reported by URLSession is .timedOut with the URLError")
        func idleTimeout() async throws {
            let stub = StubTransport(responses: [.failure(URLError(.timedOut))])
            let error = await CoreFixture.networkError { try await CoreFixture.client(stub).send(Request<Void>.get("/x")) }
            guard case .timedOut(let underlying)? = error else {
                Issue.record("expected timedOut, got \(String(describing: error))")
                return
            }
            #expect(underlying?.code == .timedOut)
        }

        @Test(
            "offline and other transport failures are mapped, not thrown raw",
            arguments: [URLError.Code.notConnectedToInternet, .cannotConnectToHost])
        func transportFailures(code: URLError.Code) async throws {
            let stub = StubTransport(responses: [.failure(URLError(code))])
            let error = await CoreFixture.networkError { try await CoreFixture.client(stub).send(Request<Void>.get("/x")) }
            switch (code, error) {
            case (.notConnectedToInternet, .offline(let e)?): #expect(e.code == code)
            case (.cannotConnectToHost, .transport(let e)?): #expect(e.code == code)
            default: Issue.record("unexpected \(String(describing: error)) for \(code)")
            }
        }
    }
}
