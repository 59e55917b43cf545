import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting

/// Streamed bodies in a content coding: CurlTransport hands them over as sent by libcurl and
/// inflates gzip and deflate on the consumer's reads, at most 64 KiB of output per chunk;
/// URLSessionTransport decodes through its own stack.
@Suite("Streamed bodies in a content coding")
struct StreamedContentDecodingTests {
    /// URLSession on Linux cannot pause: room for the whole decoded body.
    static let roomy = StreamingOptions(bufferLimit: 8 << 20)

    /// `GET /media/{bytes}?gzip=always` (TestServer/routes_downloads.py): byte i is i % 251.
    @Test("a gzip-encoded streamed body arrives decoded byte for byte, with its head as received")
    func gzipBodyArrivesDecoded() async throws {
        let (client, _) = try TestServers.apiClient()
        let size = 3_000_000
        let streamed = try await client.stream(
            Request<Data>.get("/media/\(size)", query: ["gzip": "always"]), options: Self.roomy)
        #expect(streamed.response.headers["Content-Encoding"] == "gzip")
        #expect(streamed.body.length == .unknown)
        var received = Data()
        var largest = 0
        for try await chunk in streamed.body {
            received.append(chunk)
            largest = max(largest, chunk.count)
        }
        #expect(received == DownloadFixture.content(size))
        if TestTransport.isCurl { #expect(largest <= 64 << 10, "a chunk of \(largest) bytes") }
    }

    @Test(
        "a streamed bomb arrives in decoded chunks of at most 64 KiB over CurlTransport",
        .enabled(if: TestTransport.isCurl, "URLSession's chunks are its own"), arguments: ["gzip", "deflate"])
    func bombChunksAreBounded(coding: String) async throws {
        let (client, _) = try TestServers.apiClient()
        let streamed = try await client.stream(Request<Data>.get("/hostile/bomb", query: ["coding": coding, "mib": "64"]))
        var count = 0
        var largest = 0
        var nonZero = false
        for try await chunk in streamed.body {
            count += chunk.count
            largest = max(largest, chunk.count)
            if !nonZero, chunk.contains(where: { $0 != 0 }) { nonZero = true }
        }
        #expect(count == 64 << 20)
        #expect(!nonZero)
        #expect(largest <= 64 << 10, "a chunk of \(largest) bytes")
    }

    /// `/hostile/bomb?corrupt=1`: a valid first MiB, then bytes that are no deflate block.
    @Test("a streamed body whose coding breaks mid-stream ends with corruptContent", arguments: ["gzip", "deflate"])
    func corruptStreamIsATypedError(coding: String) async throws {
        let (client, _) = try TestServers.apiClient()
        let streamed = try await client.stream(
            Request<Data>.get("/hostile/bomb", query: ["coding": coding, "mib": "4", "corrupt": "1"]), options: Self.roomy)
        let (count, reason) = await CodingFailureReading.read(streamed.body)
        #expect(reason == .corruptContent)
        #expect(count <= 1 << 20)
    }

    @Test(
        "a streamed body in a coding CurlTransport cannot inflate is unsupportedCoding, never raw bytes",
        .enabled(if: TestTransport.isCurl, "URLSession on Linux fails the task before the head"))
    func unknownCodingIsATypedError() async throws {
        let (client, _) = try TestServers.apiClient()
        let streamed = try await client.stream(Request<Data>.get("/cache/coding/unknown-content-coding"))
        let (count, reason) = await CodingFailureReading.read(streamed.body)
        #expect(count == 0)
        #expect(reason == .unsupportedCoding)
    }
}
