import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// Streamed calls against the reference server's `/stream/*` routes (TestServer/routes_streaming.py).
@Suite("Streaming against the reference server")
struct StreamingIntegrationTests {
    /// The bucket's counters (its `silences` list, for the idle-timeout tests, is left out).
    private static func streamingStats(_ namespace: String) async throws -> [String: Int] {
        let bucket = try await TestServers.stats(namespace: namespace)["streaming"] as? [String: Any] ?? [:]
        return bucket.compactMapValues { $0 as? Int }
    }

    @Test("5 MB arrive in order, chunk by chunk, byte-identical, with the known length")
    func bytes() async throws {
        let (client, _) = try TestServers.apiClient()
        let size = 5_000_000
        // A debug-build consumer is slow and URLSession on Linux cannot pause: room for all of it.
        let streamed = try await client.stream(
            Request<Data>.get("/stream/bytes", query: ["size": "\(size)"]), options: StreamingOptions(bufferLimit: 8 << 20))
        #expect(streamed.body.length == .known(Int64(size)))
        let period = Data((0..<251).map(UInt8.init))
        var count = 0
        var chunks = 0
        var mismatch: Int?
        for try await chunk in streamed.body {
            chunks += 1
            var expected = Data()
            var position = count % 251
            while expected.count < chunk.count {
                expected.append(period[position..<min(251, position + chunk.count - expected.count)])
                position = 0
            }
            if mismatch == nil && chunk != expected { mismatch = count }
            count += chunk.count
        }
        #expect(count == size)
        #expect(mismatch == nil)
        #expect(chunks > 1)
    }

    struct Record: Decodable, Sendable {
        var id: Int
        var name: String
    }

    @Test("NDJSON with CRLF, blank lines and U+2028/U+0085 inside strings decodes every record")
    func ndjson() async throws {
        let (client, _) = try TestServers.apiClient()
        let streamed = try await client.stream(
            Request<Data>.get("/stream/ndjson", query: ["count": "20000", "crlf": "1", "blank": "1", "tricky": "1"]),
            options: StreamingOptions(bufferLimit: 16 << 20))  // room for the whole body: this test is about decoding
        var next = 0
        for try await record in streamed.body.ndjson(as: Record.self) {
            #expect(record.id == next)
            if record.id != next { break }
            next += 1
        }
        #expect(next == 20000)
    }

    @Test("an unparseable NDJSON line fails with its line number after the records before it")
    func ndjsonBadLine() async throws {
        let (client, _) = try TestServers.apiClient()
        let streamed = try await client.stream(Request<Data>.get("/stream/ndjson", query: ["count": "100", "bad": "57"]))
        var decoded = 0
        do {
            for try await _ in streamed.body.ndjson(as: Record.self) { decoded += 1 }
            Issue.record("expected an error")
        } catch let MessageBodyError.undecodableLine(number, _) {
            #expect(number == 57)
        }
        #expect(decoded == 56)
    }

    @Test("a 500 before the stream is a typed error carrying the server's body, and is retried first")
    func serverError() async throws {
        let (client, namespace) = try TestServers.apiClient {
            $0.interceptors = .standard(retry: RetryInterceptor(clock: TestClock()))
        }
        do {
            _ = try await client.stream(Request<Data>.get("/stream/fail"))
            Issue.record("expected an error")
        } catch let error as NetworkError {
            #expect(error.kind == .server)
            #expect(error.failedResponse?.code == "stream_unavailable")
        }
        let attempts = try await TestServers.requestCount("GET /stream/fail", namespace: namespace)
        #expect(attempts == 1 + EndpointPolicy.standard.retry.maxRetries)
    }

    @Test("a connection dropped mid-body ends the stream with a transport error and is not retried")
    func droppedMidBody() async throws {
        let (client, namespace) = try TestServers.apiClient {
            $0.interceptors = .standard(retry: RetryInterceptor(clock: TestClock()))
        }
        let streamed = try await client.stream(Request<Data>.get("/stream/drop", query: ["after": "30000"]))
        var received = 0
        do {
            for try await chunk in streamed.body { received += chunk.count }
            Issue.record("expected an error")
        } catch let error as NetworkError {
            #expect([NetworkError.Kind.transport, .offline].contains(error.kind))
        }
        #expect(received == 30000)
        #expect(try await TestServers.requestCount("GET /stream/drop", namespace: namespace) == 1)
    }

    @Test("cancelling the consumer closes the connection: the server sees the disconnect")
    func cancellationReachesServer() async throws {
        let (client, namespace) = try TestServers.apiClient()
        let consumer = Task {
            // 80 KB/s: a consumer task the parallel pass leaves waiting for seconds stays within
            // URLSession's 1 MiB buffer on Linux (at 400 KB/s, 2.5 s behind overflowed it in CI).
            let streamed = try await client.stream(
                Request<Data>.get("/stream/endless", query: ["chunk": "4096", "delay": "0.05"]))
            var received = 0
            for try await chunk in streamed.body {
                received += chunk.count
                if received >= 40_000 { break }  // leaving the loop drops the iterator
            }
            return received
        }
        #expect(try await consumer.value >= 40_000)
        var stats: [String: Int] = [:]
        for _ in 0..<3000 {
            stats = try await Self.streamingStats(namespace)
            if stats["disconnected"] == 1 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(stats["opened"] == 1)
        #expect(stats["disconnected"] == 1)
    }

    #if canImport(FoundationNetworking)
    // CurlTransport pauses instead (CourierCurlTests: slowConsumerPausesTheTransfer).
    @Test(
        "on Linux URLSession, a consumer that falls behind the buffer bound gets streamBufferOverflow",
        TestTransport.urlSessionOnly)
    func slowConsumerOverflows() async throws {
        let (client, namespace) = try TestServers.apiClient()
        // An endless, undelayed feed: the server stops writing only when the client disconnects.
        let streamed = try await client.stream(
            Request<Data>.get("/stream/endless", query: ["chunk": "262144", "delay": "0"]),
            options: StreamingOptions(bufferLimit: 256 << 10))
        // Fall behind: let the server write well past the bound (bounded wait), then read.
        for _ in 0..<3000 {
            let written = try await Self.streamingStats(namespace)["bytesWritten"] ?? 0
            if written > 1 << 20 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        await #expect(throws: NetworkError.streamBufferOverflow(limit: 256 << 10)) {
            for try await _ in streamed.body {}
        }
        // The transfer was cancelled: the server saw the disconnect.
        for _ in 0..<3000 {
            if try await Self.streamingStats(namespace)["disconnected"] == 1 { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try await Self.streamingStats(namespace)["disconnected"] == 1)
    }

    /// A hold blocks FoundationNetworking's work queue, which every URLSession of the process
    /// shares: in the parallel pass it stalls the other suites' streams (a keep-alive stream with a
    /// 2 s idle timeout timed out beside it once), so `scripts/test` runs it alone.
    @Suite("holding the transfer, on a quiet machine") struct OnAQuietMachine {
        @Test(
            "on Linux URLSession, a consumer that drains continuously holds the transfer: at most the bound plus one chunk is ever buffered",
            TestTransport.urlSessionOnly)
        func drainingConsumerHoldsTheTransfer() async throws {
            let transport = URLSessionTransport()
            let queue = try #require(transport.session.delegateQueue as? BoundedDelegateQueue)
            let (client, _) = try TestServers.apiClient { $0.transport = transport }
            let size = 16 << 20
            let limit = 256 << 10
            var options = StreamingOptions(bufferLimit: limit)
            options.drainsContinuously = true
            let streamed = try await client.stream(
                Request<Data>.get("/stream/bytes", query: ["size": "\(size)", "chunk": "262144"]), options: options)
            let buffer = try #require(streamed.body.streamBuffer)
            // Fall behind until the bound is reached (bounded wait): from here on the delegate holds.
            for _ in 0..<3000 where !buffer.isPaused { try await Task.sleep(for: .milliseconds(10)) }
            #expect(buffer.isPaused, "the consumer fell a whole buffer behind")

            let period = Data((0..<251).map(UInt8.init))
            var count = 0
            var largestChunk = 0
            var mismatch: Int?
            do {
                for try await chunk in streamed.body {
                    largestChunk = max(largestChunk, chunk.count)
                    if mismatch == nil {
                        for (offset, byte) in chunk.enumerated() where byte != period[(count + offset) % 251] {
                            mismatch = count + offset
                            break
                        }
                    }
                    count += chunk.count
                    if count % (1 << 20) < chunk.count { await Task.yield() }  // a consumer slower than loopback
                }
                #expect(count == size)
            } catch NetworkError.streamBufferOverflow(let bound) {
                // A hold lasts at most 100 ms: a consumer starved of the pool that long (the parallel
                // suite on 2 cores) ends the body at the bound, still without holding more.
                #expect(bound == limit)
            }
            #expect(mismatch == nil)
            #expect(buffer.peakBufferedByteCount < limit + max(largestChunk, 16 << 10))
            #expect(queue.peakPendingCount <= queue.maxPending)
        }
    }
    #endif

    @Test("a 401 before the stream refreshes the token once and the stream then flows")
    func refreshBeforeStream() async throws {
        let session = try await AuthSession.start(mode: .reactive)
        let streamed = try await session.client.stream(
            Request<Data>.get("/stream/protected", query: ["size": "100000"]).policy(.authorizedRead))
        #expect(try await streamed.body.collect(upTo: 200_000).count == 100_000)
        let stats = try await session.stats()
        #expect(stats.refreshSuccesses == 1)
        #expect(stats.unauthorized == 1)
        #expect(stats.requests("GET /stream/protected") == 2)
    }
}
