#if canImport(CCurl)
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
@testable import CourierCurl

/// `CurlStreamDecoding` on bodies in memory: what a streamed CurlTransport body goes through.
@Suite("Streamed content decoding")
struct StreamDecodingTests {
    /// "Courier inflates on demand. " 40 times (1,120 bytes).
    static let plain = Data(String(repeating: "Courier inflates on demand. ", count: 40).utf8)
    static let tail = "73ce2f2dca4c2d52c8cc4bcb492c492d56c8cf534849cd4dcc4bd153701e951b951b951b95a3400e00"
    static let raw = Self.hex(tail)
    static let zlibWrapped = Self.hex("78da" + tail + "07779588")
    static let gzip = Self.hex("1f8b0800000000000203" + tail + "091786e260040000")

    static func hex(_ string: String) -> Data {
        var data = Data()
        var index = string.startIndex
        while index < string.endIndex {
            let next = string.index(index, offsetBy: 2)
            if let byte = UInt8(string[index..<next], radix: 16) { data.append(byte) }
            index = next
        }
        return data
    }

    /// `data` as a single-use body, `size` bytes a chunk.
    static func body(_ data: Data, chunk size: Int) -> MessageBody {
        let chunks = stride(from: 0, to: data.count, by: size).map { data.subdata(in: $0..<min($0 + size, data.count)) }
        let stream = AsyncStream<Data> { continuation in
            for chunk in chunks { continuation.yield(chunk) }
            continuation.finish()
        }
        return MessageBody(stream)
    }

    static let url = URL(string: "http://example.test/")!

    @Test(
        "gzip, zlib-wrapped deflate and raw deflate decode, whatever the chunking",
        arguments: [("gzip", gzip), ("x-gzip", gzip), ("deflate", zlibWrapped), ("deflate", raw)], [1, 7, 4096])
    func decodes(coding: (String, Data), chunk: Int) async throws {
        let body = CurlStreamDecoding.decoding(Self.body(coding.1, chunk: chunk), codings: [coding.0], url: Self.url)
        #expect(try await body.collect(upTo: 1 << 20) == Self.plain)
    }

    @Test(
        "a stream cut before its end, or broken, is corruptContent",
        arguments: [gzip.prefix(30), gzip.prefix(1), hex("1f8b08ff")])
    func truncatedIsCorrupt(data: Data) async throws {
        let body = CurlStreamDecoding.decoding(Self.body(Data(data), chunk: 8), codings: ["gzip"], url: Self.url)
        let error = await #expect(throws: NetworkError.self) { _ = try await body.collect(upTo: 1 << 20) }
        guard case .undecodableResponse(let failure) = error else {
            Issue.record("expected undecodableResponse, got \(String(describing: error))")
            return
        }
        #expect(failure.reason == .corruptContent)
    }

    @Test("an unknown coding is unsupportedCoding at the first read; identity and an empty body pass")
    func unknownCoding() async throws {
        let body = CurlStreamDecoding.decoding(Self.body(Self.gzip, chunk: 64), codings: ["gzip", "br"], url: Self.url)
        let error = await #expect(throws: NetworkError.self) { _ = try await body.collect(upTo: 1 << 20) }
        guard case .undecodableResponse(let failure) = error else {
            Issue.record("expected undecodableResponse, got \(String(describing: error))")
            return
        }
        #expect(failure.reason == .unsupportedCoding)
        let headers = HTTPHeaders([HTTPHeaders.Field(name: "Content-Encoding", value: "identity, GZIP")])
        #expect(CurlStreamDecoding.codings(headers) == ["gzip"])
        let empty = CurlStreamDecoding.decoding(Self.body(Data(), chunk: 1), codings: ["gzip"], url: Self.url)
        #expect(try await empty.collect(upTo: 10) == Data())
    }

    /// "A second member.\n" as a gzip member (Python's `gzip.compress(_, mtime=0)`).
    static let secondMember = Self.hex("1f8b08000000000002037354284e4dcecf4b51c84dcd4d4a2dd2e30200241e68df11000000")
    static let secondPlain = Data("A second member.\n".utf8)

    @Test(
        "a gzip body of several members (RFC 1952 §2.2) decodes to every member's bytes, whatever the chunking",
        arguments: [1, 7, 4096])
    func decodesEveryMember(chunk: Int) async throws {
        let members = Self.gzip + Self.secondMember + Self.gzip
        let body = CurlStreamDecoding.decoding(Self.body(members, chunk: chunk), codings: ["gzip"], url: Self.url)
        #expect(try await body.collect(upTo: 1 << 20) == Self.plain + Self.secondPlain + Self.plain)
    }

    @Test("zero bytes after a gzip member are padding: skipped, also between members", arguments: [1, 5, 4096])
    func zeroPaddingIsSkipped(chunk: Int) async throws {
        let padded = Self.gzip + Data(count: 9) + Self.secondMember + Data(count: 512)
        let body = CurlStreamDecoding.decoding(Self.body(padded, chunk: chunk), codings: ["gzip"], url: Self.url)
        #expect(try await body.collect(upTo: 1 << 20) == Self.plain + Self.secondPlain)
    }

    @Test(
        "bytes after a member that begin no gzip member, a cut second member, or bytes after a deflate stream are corruptContent",
        arguments: [
            ("gzip", gzip + Data("garbage!".utf8)),
            ("gzip", gzip + Data(count: 3) + Data([0x01])),
            ("gzip", gzip + secondMember.prefix(12)),
            ("gzip", gzip + hex("789cabcac94c0200046401b2")),  // a zlib stream is no gzip member
            ("deflate", zlibWrapped + Data([0x00])),
            ("deflate", raw + Data("x".utf8)),
        ])
    func bytesAfterTheEndAreCorrupt(coding: (String, Data)) async throws {
        let body = CurlStreamDecoding.decoding(Self.body(coding.1, chunk: 16), codings: [coding.0], url: Self.url)
        var received = Data()
        let error = await #expect(throws: NetworkError.self) {
            for try await chunk in body { received.append(chunk) }
        }
        guard case .undecodableResponse(let failure) = error else {
            Issue.record("expected undecodableResponse, got \(String(describing: error))")
            return
        }
        #expect(failure.reason == .corruptContent)
        // What decoded before the bad bytes was handed over (of a cut member, what it held); nothing from them.
        #expect(received == (Self.plain + Self.secondPlain).prefix(received.count))
        #expect(received.count >= Self.plain.count)
    }

    /// 1 MiB of zeros, gzip (zlib level 9): 1,051 bytes.
    static let zerosGzip = [
        "1f8b0800000000000203edc13101000000c2a0f54f6d085fa00000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
        "0000000000000000000000000000000000000000000000000000000000000000003e031cea38a700001000",
    ].joined()

    @Test("a bomb's chunks are at most 64 KiB each")
    func chunksAreBounded() async throws {
        let zeros = Data(count: 1 << 20)
        let compressed = Self.hex(Self.zerosGzip)
        let body = CurlStreamDecoding.decoding(Self.body(compressed, chunk: 512), codings: ["gzip"], url: Self.url)
        var total = Data()
        for try await chunk in body {
            #expect(chunk.count <= CurlStreamDecoding.outputChunk)
            total.append(chunk)
        }
        #expect(total == zeros)
    }

    /// Every order of members and zero padding, in chunks of every size from 1 byte to 2 KiB
    /// (seeded): the body ends, with every member's bytes. Large bodies are compared as a `Bool`:
    /// a failed `==` of two megabyte `Data` values makes Swift Testing diff them, for minutes.
    @Test("members and padding in any order and chunking decode whole and end")
    func membersInAnyChunking() async throws {
        let bomb = Self.hex(Self.zerosGzip)
        let parts: [(coded: Data, plain: Data)] = [
            (Self.gzip, Self.plain), (Self.secondMember, Self.secondPlain), (bomb, Data(count: 1 << 20)),
            (Data(count: 3), Data()), (Data(count: 1), Data()),
        ]
        var seed: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        for _ in 0..<40 {
            var coded = Self.gzip
            var plain = Self.plain
            for _ in 0..<(1 + next(4)) {
                let part = parts[next(parts.count)]
                coded += part.coded
                plain += part.plain
            }
            let chunk = 1 + next(2048)
            let body = CurlStreamDecoding.decoding(Self.body(coded, chunk: chunk), codings: ["gzip"], url: Self.url)
            var total = Data()
            for try await piece in body {
                #expect(piece.count <= CurlStreamDecoding.outputChunk)
                total.append(piece)
            }
            let same = total == plain
            #expect(same, "chunk \(chunk), \(coded.count) coded bytes: \(total.count) decoded, \(plain.count) expected")
        }
    }

    @Test("a body of two bomb members is inflated in chunks of at most 64 KiB, both members whole")
    func memberChunksAreBounded() async throws {
        let compressed = Self.hex(Self.zerosGzip)
        let body = CurlStreamDecoding.decoding(
            Self.body(compressed + Self.secondMember + compressed, chunk: 700), codings: ["gzip"], url: Self.url)
        var total = Data()
        for try await chunk in body {
            #expect(chunk.count <= CurlStreamDecoding.outputChunk)
            total.append(chunk)
        }
        let expected = Data(count: 1 << 20) + Self.secondPlain + Data(count: 1 << 20)
        let same = total == expected
        #expect(same, "\(total.count) bytes decoded, \(expected.count) expected")
    }
}
#endif
