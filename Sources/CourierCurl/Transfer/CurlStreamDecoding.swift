#if canImport(CCurl)
import CZlib
import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Content codings of a streamed body, undone by Courier on demand instead of by libcurl.
///
/// libcurl (7.88) keeps everything it inflated from one socket read while a streamed transfer is
/// paused (up to 64 MiB, then "Out of memory"): a compression bomb escaped the stream's
/// `bufferLimit`. A streamed transfer therefore receives the bytes as sent
/// (`CURLOPT_HTTP_CONTENT_DECODING` 0), the `StreamBuffer` holds compressed bytes within its limit,
/// and the consumer's task inflates them when it asks for the next chunk: at most
/// ``outputChunk`` bytes of output each time, whatever the ratio.
enum CurlStreamDecoding {
    /// The `Accept-Encoding` a streamed request sends when the caller named none: the codings
    /// Courier decodes itself.
    static let acceptEncoding = "gzip, deflate"

    /// The content codings Courier decodes for a streamed body.
    static let decodedCodings: Set<String> = ["gzip", "x-gzip", "deflate"]

    /// The most decoded bytes in one chunk handed to the consumer.
    static let outputChunk = 64 << 10

    /// The codings of `headers`' `Content-Encoding` fields in the order applied, lower-cased,
    /// `identity` left out.
    static func codings(_ headers: HTTPHeaders) -> [String] {
        headers.values(for: "Content-Encoding").flatMap {
            $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        }.filter { !$0.isEmpty && $0 != "identity" }
    }

    /// `body` with `codings` undone, last applied first; a coding Courier does not decode ends the
    /// body at its first read with ``ResponseCodingFailure/Reason/unsupportedCoding`` (and cancels
    /// the transfer).
    static func decoding(_ body: MessageBody, codings: [String], url: URL) -> MessageBody {
        if let unknown = codings.first(where: { !decodedCodings.contains($0) }) {
            let error = failure(.unsupportedCoding, "Unrecognized content encoding type: \(unknown)", url: url)
            return MessageBody(wrapping: body, chunks: FailingChunks(base: body, error: error))
        }
        var decoded = body
        for coding in codings.reversed() {
            decoded = MessageBody(wrapping: decoded, chunks: InflatedChunks(base: decoded, coding: coding, url: url))
        }
        return decoded
    }

    /// The error a body ends with when its coding cannot be undone, as libcurl's own failures map
    /// (``CurlErrorMapping``): `URLError.cannotDecodeContentData` with the reason stated, marked
    /// ``ResponseCodingFailure/endedEarlyKey`` when the bytes ended before the coded stream did.
    static func failure(
        _ reason: ResponseCodingFailure.Reason, _ message: String, url: URL, endedEarly: Bool = false
    ) -> NetworkError {
        var userInfo: [String: Any] = [
            NSLocalizedDescriptionKey: message, NSURLErrorFailingURLErrorKey: url, ResponseCodingFailure.reasonKey: reason,
        ]
        if endedEarly { userInfo[ResponseCodingFailure.endedEarlyKey] = true }
        return NetworkError(URLError(.cannotDecodeContentData, userInfo: userInfo))
    }
}

/// A body in a coding Courier cannot decode: its first read throws, and the transport's body is
/// released (the transfer is cancelled).
private struct FailingChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let base: MessageBody
    let error: NetworkError

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: MessageBody.Iterator?
        let error: NetworkError

        mutating func next() async throws -> Data? {
            guard base != nil else { return nil }
            base = nil  // dropping the transport's iterator before the end cancels the transfer
            throw error
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), error: error) }
}

/// The chunks of `base` inflated (gzip, or deflate with or without its zlib wrapper), at most
/// ``CurlStreamDecoding/outputChunk`` bytes each, each made when the consumer asks for it.
///
/// A gzip body may be several gzip members one after another (RFC 1952 §2.2, what
/// `gzip -c a >> f; gzip -c b >> f` writes): each member is inflated in turn and the body is the
/// members' contents concatenated, as `gzip -d` gives them. Zero bytes after a member are padding
/// and skipped (as `gzip -d` and Python's `gzip` skip them); any other byte after a member must
/// begin another gzip member, or the body ends with
/// ``ResponseCodingFailure/Reason/corruptContent``. A deflate body is one stream: any byte after
/// its end is `corruptContent`.
private struct InflatedChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let base: MessageBody
    let coding: String
    let url: URL

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), coding: coding, url: url) }

    struct AsyncIterator: AsyncIteratorProtocol {
        private var base: MessageBody.Iterator
        private let coding: String
        private let url: URL
        private var inflater: Inflater?
        /// Compressed bytes not yet given to zlib (`input[offset...]`).
        private var input = Data()
        private var offset = 0
        /// zlib may hold more output: the last call filled the output buffer.
        private var outputPending = false
        /// The last stream (a gzip member, or the deflate stream) ended; what follows is padding,
        /// another gzip member, or the end of the body.
        private var streamEnded = false
        private var done = false

        init(base: MessageBody.Iterator, coding: String, url: URL) {
            self.base = base
            self.coding = coding
            self.url = url
        }

        mutating func next() async throws -> Data? {
            guard !done else { return nil }
            while true {
                if let inflater, streamEnded, offset < input.count {
                    try startNextMember(inflater)
                    continue
                }
                if let inflater, !streamEnded, offset < input.count || outputPending {
                    let (output, status) = inflate(inflater)
                    switch status {
                    case Z_OK, Z_BUF_ERROR:
                        outputPending = output.count == CurlStreamDecoding.outputChunk
                    case Z_STREAM_END:
                        streamEnded = true
                        outputPending = false
                    default:
                        done = true
                        throw corrupt("Error while processing content unencoding: zlib error \(status)")
                    }
                    if !output.isEmpty { return output }
                    continue
                }
                guard let chunk = try await base.next() else {
                    done = true
                    // A stream cut before its end (or shorter than a header) is not the body.
                    if !streamEnded && (inflater != nil || !input.isEmpty) {
                        throw CurlStreamDecoding.failure(
                            .corruptContent, "Error while processing content unencoding: the \(coding) stream ended early",
                            url: url, endedEarly: true)
                    }
                    return nil
                }
                if inflater == nil {
                    input.append(chunk)
                    guard let made = try makeInflater() else { continue }  // the header is not whole yet
                    inflater = made
                } else {
                    input = chunk
                    offset = 0
                }
            }
        }

        /// After the end of a stream: skips zero padding in `input` (gzip) and, at a byte that is
        /// not zero, starts inflating the next gzip member there; a byte after a deflate stream,
        /// or a gzip member that cannot start, is `corruptContent`.
        private mutating func startNextMember(_ inflater: Inflater) throws {
            guard coding != "deflate" else {
                done = true
                throw corrupt("Error while processing content unencoding: bytes after the end of the deflate stream")
            }
            let start = offset
            let zeros = input.withUnsafeBytes { bytes in bytes[start...].prefix { $0 == 0 }.count }
            offset += zeros
            if offset >= input.count {
                input = Data()
                offset = 0
                return
            }
            // Another member: gzip only (a zlib stream is not a gzip member), its header checked by zlib.
            guard inflater.reset(windowBits: 15 + 16) else {
                done = true
                throw corrupt("Error while processing content unencoding: zlib could not restart")
            }
            streamEnded = false
        }

        /// The inflater for the first bytes in `input`, or `nil` while too few have arrived to
        /// tell a zlib header from raw deflate.
        private mutating func makeInflater() throws -> Inflater? {
            let windowBits: Int32
            if coding == "deflate" {
                // `deflate` is zlib-wrapped (RFC 9110 §8.4.1.2), but some servers send raw deflate,
                // which browsers accept: a first pair of bytes that is no zlib header means raw.
                guard input.count >= 2 else { return nil }
                let first = Int(input[input.startIndex])
                let second = Int(input[input.startIndex + 1])
                let isZlib = first & 0x0F == 8 && first >> 4 <= 7 && (first << 8 | second) % 31 == 0
                windowBits = isZlib ? 15 : -15
            } else {
                windowBits = 15 + 32  // gzip (or a zlib wrapper), detected from the header
            }
            guard let inflater = Inflater(windowBits: windowBits) else {
                done = true
                throw corrupt("Error while processing content unencoding: zlib could not start")
            }
            return inflater
        }

        /// One call of `inflate` on the pending input with room for one output chunk.
        private mutating func inflate(_ inflater: Inflater) -> (Data, Int32) {
            var output = Data(count: CurlStreamDecoding.outputChunk)
            let start = offset
            let (consumed, produced, status) = input.withUnsafeBytes { source in
                output.withUnsafeMutableBytes { target in
                    inflater.inflate(
                        UnsafeRawBufferPointer(rebasing: source[start...]), into: target)
                }
            }
            offset += consumed
            output.count = produced
            if offset >= input.count {
                input = Data()
                offset = 0
            }
            return (output, status)
        }

        private func corrupt(_ message: String) -> NetworkError {
            CurlStreamDecoding.failure(.corruptContent, message, url: url)
        }
    }
}

/// One zlib inflate stream (used by one iterator, on one task at a time).
private final class Inflater {
    private let stream: UnsafeMutablePointer<z_stream>

    init?(windowBits: Int32) {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        guard czlib_inflate_init2(stream, windowBits) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            return nil
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Starts a new stream with `windowBits` (zlib's convention) on the same state: `false` when
    /// zlib refuses.
    func reset(windowBits: Int32) -> Bool {
        inflateReset2(stream, windowBits) == Z_OK
    }

    /// Inflates from `source` into `target`: the bytes consumed, the bytes produced and zlib's status.
    func inflate(_ source: UnsafeRawBufferPointer, into target: UnsafeMutableRawBufferPointer) -> (Int, Int, Int32) {
        guard let out = target.baseAddress?.assumingMemoryBound(to: Bytef.self) else { return (0, 0, Z_BUF_ERROR) }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: source.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(source.count)
        stream.pointee.next_out = out
        stream.pointee.avail_out = uInt(target.count)
        let status = CZlib.inflate(stream, Z_NO_FLUSH)
        let consumed = source.count - Int(stream.pointee.avail_in)
        let produced = target.count - Int(stream.pointee.avail_out)
        stream.pointee.next_in = nil
        stream.pointee.avail_in = 0
        return (consumed, produced, status)
    }
}
#endif
