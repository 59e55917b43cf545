#if canImport(CCurl)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierCurl

/// Streamed bodies with real back-pressure and prompt cancellation (issue 12, items 3 and 4),
/// observed from the server: what it managed to write, whether it saw the client go away.
@Suite("CurlTransport streams: back-pressure and cancellation")
struct StreamingTests {
    @Test("a consumer that stops reading pauses the transfer: the server's writes stall far below the body size")
    func slowConsumerPausesTheTransfer() async throws {
        let (base, namespace) = try CurlServers.namespace()
        let size = 16 << 20
        let transport = CurlTransport()
        let response = try await transport.stream(
            URLRequest(url: base.appendingPathComponent("flow/bytes/\(size)")), options: StreamingOptions(bufferLimit: 256 << 10))
        #expect(response.statusCode == 200)
        let body = response.body
        var iterator = body.makeAsyncIterator()
        var received = try #require(try await iterator.next()).count

        // The consumer holds off: the server's count must settle (TCP flow control) well below the size.
        let clock = ContinuousClock()
        var last = -1
        var stableSince = clock.now
        var stableReads = 0
        // 60 s: a loaded server takes long to fill the socket buffers; waiting longer never weakens
        // the proof below (what it wrote stays far below the size).
        try await CurlServers.waitUntil("the server's writes stop growing", limit: .seconds(60)) {
            let written = try await CurlServers.flow(namespace).bytesWritten
            if written != last { stableSince = clock.now }
            stableReads = written == last ? stableReads + 1 : 0
            last = written
            return stableReads >= 3 && clock.now - stableSince >= .milliseconds(300)  // unchanged for 300 ms
        }
        #expect(last < 12 << 20, "the server wrote \(last) of \(size) bytes while the consumer was not reading")
        #expect(try await CurlServers.flow(namespace).completed == 0)

        // Draining resumes the transfer; every byte arrives, in order.
        var position = received
        var ordered = true
        while let chunk = try await iterator.next() {
            if ordered, let first = chunk.first, Int(first) != position % 251 { ordered = false }
            position += chunk.count
            received += chunk.count
        }
        #expect(received == size)
        #expect(ordered)
        #expect(try await CurlServers.flow(namespace).completed == 1)
    }

    @Test("cancelling the consuming task closes the connection at once: the server sees the disconnect")
    func cancellingTheConsumerClosesTheConnection() async throws {
        let (base, namespace) = try CurlServers.namespace()
        let transport = CurlTransport()
        let started = AsyncStream<Void>.makeStream()
        let consumer = Task {
            let response = try await transport.stream(
                URLRequest(url: base.appendingPathComponent("flow/hold")), options: StreamingOptions())
            var total = 0
            for try await chunk in response.body {
                total += chunk.count
                started.continuation.yield()
            }
            return total
        }
        for await _ in started.stream { break }
        let clock = ContinuousClock()
        let cancelledAt = clock.now
        consumer.cancel()
        await #expect(throws: (any Error).self) { try await consumer.value }
        try await CurlServers.waitUntil("the server saw the client disconnect") {
            try await CurlServers.flow(namespace).disconnects == 1
        }
        #expect(clock.now - cancelledAt < .seconds(15))  // the hold lasts 60 s; slack for a loaded CI machine
        #expect(try await CurlServers.flow(namespace).completed == 0)
    }

    @Test("cancelling a buffered send aborts the transfer: the server sees the disconnect, the caller URLError.cancelled")
    func cancellingASendClosesTheConnection() async throws {
        let (base, namespace) = try CurlServers.namespace()
        let transport = CurlTransport()
        let call = Task { try await transport.send(URLRequest(url: base.appendingPathComponent("flow/hold"))) }
        try await CurlServers.waitUntil("the server started the response") { try await CurlServers.flow(namespace).started == 1 }
        call.cancel()
        let result = await call.result
        guard case .failure(let error as URLError) = result else {
            Issue.record("expected URLError.cancelled, got \(result)")
            return
        }
        #expect(error.code == .cancelled)
        try await CurlServers.waitUntil("the server saw the client disconnect") {
            try await CurlServers.flow(namespace).disconnects == 1
        }
    }

    @Test("a body outlives its transport: releasing the transport lets the running transfer finish")
    func bodyOutlivesTheTransport() async throws {
        let (base, _) = try CurlServers.namespace()
        let response = try await CurlTransport().stream(
            URLRequest(url: base.appendingPathComponent("flow/bytes/\(1 << 20)")),
            options: StreamingOptions(bufferLimit: 64 << 10))
        var total = 0
        for try await chunk in response.body { total += chunk.count }
        #expect(total == 1 << 20)
    }

    @Test("dropping the iterator before the end cancels the transfer")
    func droppingTheBodyCancels() async throws {
        let (base, namespace) = try CurlServers.namespace()
        let transport = CurlTransport()
        do {
            let response = try await transport.stream(
                URLRequest(url: base.appendingPathComponent("flow/hold")), options: StreamingOptions())
            let body = response.body
            var iterator = body.makeAsyncIterator()
            _ = try await iterator.next()
        }
        try await CurlServers.waitUntil("the server saw the client disconnect") {
            try await CurlServers.flow(namespace).disconnects == 1
        }
    }

    @Test("a request body streams from httpBodyStream without blocking other transfers while the stream waits")
    func uploadFromAStreamThatWaits() async throws {
        let (base, _) = try CurlServers.namespace()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        var request = URLRequest(url: base.appendingPathComponent("upload"))
        request.httpMethod = "PUT"
        // A pipe: on Linux its InputStream claims bytes are available and then blocks in read.
        request.httpBodyStream = InputStream(fileAtPath: "/dev/fd/\(fds[0])")
        let payload = Data((0..<200_000).map { UInt8($0 % 251) })
        let transport = CurlTransport()
        let upload = Task { try await transport.send(request) }
        // While the upload waits for its first byte, another request on the same transport completes.
        let other = try await transport.send(URLRequest(url: base.appendingPathComponent("echo")))
        #expect(other.statusCode == 200)
        var offset = 0
        while offset < payload.count {
            let written = payload[offset...].prefix(4096).withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
            #expect(written > 0)
            guard written > 0 else { break }
            offset += written
        }
        close(fds[1])
        let response = try await upload.value
        struct Uploaded: Decodable {
            var bytes: Int
            var sha256: String
            var transferEncoding: String?
        }
        let uploaded = try JSONDecoder().decode(Uploaded.self, from: response.data)
        #expect(uploaded.bytes == payload.count)
        #expect(uploaded.transferEncoding == "chunked")
        #expect(uploaded.sha256 == SHA256Hex.of(payload))
    }
}

/// SHA-256 in hex with the openssl-free digest Courier already carries (via the pin API).
enum SHA256Hex {
    static func of(_ data: Data) -> String {
        // SPKIPin hashes arbitrary bytes with Courier's SHA-256.
        let pin = SPKIPin(subjectPublicKeyInfo: data)
        return (Data(base64Encoded: pin.base64) ?? Data()).map { String(format: "%02x", $0) }.joined()
    }
}
#endif
