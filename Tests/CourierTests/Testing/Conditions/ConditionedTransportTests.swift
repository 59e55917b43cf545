import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

extension CoreTests {
    /// ConditionedTransport on a TestClock: every delay is an exact sleep.
    @Suite struct NetworkConditionsOnATestClock {
        static let url = URL(string: "https://api.example.test/v1/files/1")!

        static func body(_ count: Int) -> Data { Data((0..<count).map { UInt8($0 % 251) }) }

        @Test("upload, latency and download time add up exactly for a buffered call")
        func bufferedTimings() async throws {
            let clock = TestClock()
            let stub = StubTransport { _ in HTTPResponse(statusCode: 200, body: Self.body(100_000)) }
            let network = ConditionedTransport(
                wrapping: stub,
                conditions: NetworkConditions(
                    latency: .milliseconds(300), uploadBytesPerSecond: 5_000, downloadBytesPerSecond: 50_000),
                clock: clock)
            var request = URLRequest(url: Self.url)
            request.httpMethod = "PUT"
            request.httpBody = Self.body(10_000)
            let response = try await network.send(request)
            #expect(response.data == Self.body(100_000))
            #expect(clock.sleeps == [.seconds(2), .milliseconds(300), .seconds(2)])
            #expect(clock.now.offset == .milliseconds(4_300))
        }

        @Test("a streamed body arrives chunk by chunk at the download bandwidth")
        func streamedChunks() async throws {
            let clock = TestClock()
            let stub = StubTransport { _ in HTTPResponse(statusCode: 200, body: Self.body(40_960)) }
            let network = ConditionedTransport(
                wrapping: stub, conditions: NetworkConditions(latency: .milliseconds(100), downloadBytesPerSecond: 16_384),
                clock: clock)
            let response = try await network.stream(URLRequest(url: Self.url), options: StreamingOptions())
            #expect(clock.now.offset == .milliseconds(100), "the head arrives after the latency alone")
            var sizes: [Int] = []
            var offsets: [Duration] = []
            var received = Data()
            for try await chunk in response.body {
                sizes.append(chunk.count)
                offsets.append(clock.now.offset)
                received.append(chunk)
            }
            #expect(sizes == [16_384, 16_384, 8_192])
            #expect(offsets == [.milliseconds(1_100), .milliseconds(2_100), .milliseconds(2_600)])
            #expect(received == Self.body(40_960))
        }

        @Test("the connection drops after exactly N bytes, buffered or streamed")
        func dropAfterBytes() async throws {
            let clock = TestClock()
            let stub = StubTransport { _ in HTTPResponse(statusCode: 200, body: Self.body(40_960)) }
            let network = ConditionedTransport(
                wrapping: stub, conditions: NetworkConditions(downloadBytesPerSecond: 10_000, dropAfterBytes: 20_000),
                clock: clock)
            let response = try await network.stream(URLRequest(url: Self.url), options: StreamingOptions())
            var received = Data()
            let error = await #expect(throws: NetworkError.self) {
                for try await chunk in response.body { received.append(chunk) }
            }
            #expect(received == Self.body(20_000))
            guard case .transport(let urlError)? = error else {
                Issue.record("expected a lost connection, got \(String(describing: error))")
                return
            }
            #expect(urlError.code == .networkConnectionLost)
            #expect(clock.now.offset == .seconds(2))

            await #expect(throws: URLError(.networkConnectionLost)) { try await network.send(URLRequest(url: Self.url)) }
            #expect(clock.now.offset == .seconds(4), "the buffered call also spent the time of the bytes before the drop")
        }

        @Test("requests inside an offline window fail as offline without reaching the server")
        func offlineWindows() async throws {
            let clock = TestClock()
            let stub = StubTransport { _ in .status(204) }
            let network = ConditionedTransport(
                wrapping: stub,
                conditions: NetworkConditions(latency: .seconds(1), offlineWindows: [.seconds(1)..<(.seconds(3))]),
                clock: clock)
            let client = CoreFixture.client(StubTransport { _ in .status(500) }) { $0.transport = network }
            try await client.send(Request<Void>.get("/a"))  // at 0 s, ends at 1 s
            let offline = await CoreFixture.networkError { try await client.send(Request<Void>.get("/b")) }
            guard case .offline? = offline else {
                Issue.record("expected offline, got \(String(describing: offline))")
                return
            }
            clock.advance(by: .seconds(2))  // 3 s: the window is over
            try await client.send(Request<Void>.get("/c"))
            #expect(stub.requests.map { $0.url?.lastPathComponent } == ["a", "c"])
        }

        @Test("the failure rate is drawn from the seed: the same seed fails the same requests")
        func seededFailures() async throws {
            func run(seed: UInt64) async -> (pattern: [Bool], sent: Int) {
                let stub = StubTransport { _ in .status(204) }
                let network = ConditionedTransport(
                    wrapping: stub, conditions: NetworkConditions(failureRate: 0.3), clock: TestClock(), seed: seed)
                var pattern: [Bool] = []
                for _ in 0..<40 {
                    do {
                        _ = try await network.send(URLRequest(url: Self.url))
                        pattern.append(true)
                    } catch {
                        #expect(error as? URLError == URLError(.networkConnectionLost))
                        pattern.append(false)
                    }
                }
                return (pattern, stub.requestCount)
            }
            let first = await run(seed: 7)
            let again = await run(seed: 7)
            let other = await run(seed: 8)
            #expect(first.pattern == again.pattern)
            #expect(first.pattern != other.pattern)
            #expect(first.sent == first.pattern.filter { $0 }.count, "a failed request never reaches the wrapped transport")
            let failures = first.pattern.filter { !$0 }.count
            #expect((4...20).contains(failures), "about 30 % of 40: \(failures)")
        }

        @Test("changing the conditions brings the network back for the next request")
        func changeConditions() async throws {
            let stub = StubTransport { _ in .status(204) }
            let network = ConditionedTransport(wrapping: stub, conditions: .offline, clock: TestClock())
            await #expect(throws: URLError(.notConnectedToInternet)) { try await network.send(URLRequest(url: Self.url)) }
            network.conditions = .perfect
            #expect(try await network.send(URLRequest(url: Self.url)).statusCode == 204)
        }

        @Test("a client deadline shorter than the latency times out on the same clock")
        func deadlineOnTheSameClock() async throws {
            let clock = TestClock(mode: .manual)
            let network = ConditionedTransport(
                wrapping: StubTransport { _ in .status(204) }, conditions: NetworkConditions(latency: .seconds(10)), clock: clock)
            let task = Task { try await network.send(URLRequest(url: Self.url)) }
            try await clock.waitForSleeper(until: TestClock.Instant(offset: .seconds(10)))
            clock.advance(by: .seconds(4))
            #expect(clock.sleeperCount == 1, "still waiting for the head")
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
        }
    }
}
