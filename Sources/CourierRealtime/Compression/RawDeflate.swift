import CZlib

/// Compresses the messages of one connection with raw DEFLATE (RFC 1951, zlib with negative
/// windowBits) as RFC 7692 §7.2.1 asks: each message is flushed with `Z_SYNC_FLUSH` and the
/// empty stored block that ends it (`00 00 ff ff`) is removed. With context takeover the LZ77
/// window carries over to the next message; without, the compressor is reset after each one.
///
/// Owned by one connection actor; not thread-safe.
final class RawDeflater {
    private let stream: UnsafeMutablePointer<z_stream>
    /// `client_no_context_takeover`: no message's bytes stay in the window for the next one.
    let resetsAfterEachMessage: Bool

    /// The compressed-output chunk, in bytes.
    static let chunk = 16 * 1024

    /// - Parameters:
    ///   - windowBits: The LZ77 window (9–15). zlib cannot compress raw DEFLATE with an 8-bit
    ///     window; the caller sends such a connection's messages uncompressed.
    ///   - resetsAfterEachMessage: `client_no_context_takeover`.
    /// - Returns: `nil` when zlib refuses the parameters or has no memory.
    init?(windowBits: Int, resetsAfterEachMessage: Bool) {
        guard let stream = makeStream({ czlib_deflate_init_raw($0, Z_DEFAULT_COMPRESSION, Int32(windowBits), 8) })
        else { return nil }
        self.stream = stream
        self.resetsAfterEachMessage = resetsAfterEachMessage
    }

    deinit { freeStream(stream) { deflateEnd($0) } }

    /// The compressed payload of one message (RFC 7692 §7.2.1), without the `00 00 ff ff` tail.
    ///
    /// - Throws: ``WebSocketError/protocolError(_:)`` when zlib fails (it does not for valid
    ///   parameters and memory).
    func compress(_ message: [UInt8]) throws -> [UInt8] {
        // An empty message is the single byte 0x00 (RFC 7692 §7.2.3.6): the header of the empty
        // stored block the receiver completes with `00 00 ff ff`. zlib would write nothing (a
        // second sync flush without input is Z_BUF_ERROR), and an empty payload followed by the
        // tail is not a whole block.
        guard !message.isEmpty else {
            if resetsAfterEachMessage { deflateReset(stream) }
            return [0x00]
        }
        var output: [UInt8] = []
        output.reserveCapacity(message.count / 2 + 64)
        var chunk = [UInt8](repeating: 0, count: Self.chunk)
        var input = message
        let status: Int32 = input.withUnsafeMutableBufferPointer { source in
            stream.pointee.next_in = source.baseAddress
            stream.pointee.avail_in = UInt32(source.count)
            var status = Z_OK
            repeat {
                let step = flushStep(stream, into: &chunk) { deflate($0, Z_SYNC_FLUSH) }
                status = step.status
                output += chunk[..<step.produced]
                // Done once a flush left room in the output: all input consumed and flushed.
                if status == Z_OK, stream.pointee.avail_out != 0 { break }
            } while status == Z_OK
            stream.pointee.next_in = nil
            return status
        }
        guard status == Z_OK || status == Z_BUF_ERROR else {
            throw WebSocketError.protocolError("the compressor failed (zlib status \(status))")
        }
        if output.count >= 4, output.suffix(4).elementsEqual([0x00, 0x00, 0xFF, 0xFF]) { output.removeLast(4) }
        if resetsAfterEachMessage { deflateReset(stream) }
        return output
    }
}

/// Decompresses the messages of one connection (RFC 7692 §7.2.2): the frames' payloads are fed
/// as they arrive, the `00 00 ff ff` tail is appended at the end of each message, and the output
/// is produced in chunks of ``chunk`` bytes, each counted against the message limit before it
/// is kept, so a compression bomb costs at most the limit plus one chunk.
///
/// Owned by one connection actor; not thread-safe.
final class RawInflater {
    private let stream: UnsafeMutablePointer<z_stream>
    private let resetsAfterEachMessage: Bool
    /// The compressed data of the current message ended with a final block (BFINAL): what
    /// follows in the message is ignored, and the window starts empty at the next message.
    private var ended = false

    /// The inflated-output chunk, in bytes.
    static let chunk = 16 * 1024

    /// - Parameter resetsAfterEachMessage: `server_no_context_takeover`.
    /// - Returns: `nil` when zlib has no memory.
    init?(resetsAfterEachMessage: Bool) {
        // A 15-bit window inflates anything compressed with a smaller one (RFC 7692 §7.1.2.1).
        guard let stream = makeStream({ czlib_inflate_init_raw($0, 15) }) else { return nil }
        self.stream = stream
        self.resetsAfterEachMessage = resetsAfterEachMessage
    }

    deinit { freeStream(stream) { inflateEnd($0) } }

    /// Inflates `input` (a frame's payload, or the tail at the end of a message) onto `output`.
    ///
    /// - Parameter limit: The largest `output.count` allowed.
    /// - Throws: ``WebSocketError/messageTooBig(limit:)`` once the output would pass `limit`;
    ///   ``WebSocketError/protocolError(_:)`` for data that is not DEFLATE.
    func inflate(_ input: [UInt8], onto output: inout [UInt8], limit: Int) throws {
        guard !ended, !input.isEmpty else { return }
        var chunk = [UInt8](repeating: 0, count: Self.chunk)
        var input = input
        var failure: WebSocketError?
        input.withUnsafeMutableBufferPointer { source in
            stream.pointee.next_in = source.baseAddress
            stream.pointee.avail_in = UInt32(source.count)
            defer { stream.pointee.next_in = nil }
            while true {
                let (status, produced) = flushStep(stream, into: &chunk) { CZlib.inflate($0, Z_SYNC_FLUSH) }
                switch status {
                case Z_OK, Z_STREAM_END, Z_BUF_ERROR: break
                default:
                    let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib status \(status)"
                    failure = .protocolError("compressed message is not valid DEFLATE data: \(reason) (RFC 7692 §7.2.2)")
                    return
                }
                guard output.count + produced <= limit else {
                    failure = .messageTooBig(limit: limit)
                    return
                }
                output += chunk[..<produced]
                if status == Z_STREAM_END {
                    ended = true
                    return
                }
                // More output may wait while the chunk came back full; otherwise all input is used.
                if stream.pointee.avail_out != 0, stream.pointee.avail_in == 0 { return }
                if status == Z_BUF_ERROR, produced == 0 { return }
            }
        }
        if let failure { throw failure }
    }

    /// Ends a message: inflates the `00 00 ff ff` tail the sender removed (RFC 7692 §7.2.2), then
    /// resets the window when the server does not keep its context (or the data ended with a
    /// final block).
    ///
    /// - Throws: ``WebSocketError/protocolError(_:)`` when the data stops inside a block (a sender
    ///   ends each message at a block boundary, §7.2.1): the part inflated so far is not the
    ///   message, and the window is no longer the sender's.
    func finishMessage(onto output: inout [UInt8], limit: Int) throws {
        try inflate([0x00, 0x00, 0xFF, 0xFF], onto: &output, limit: limit)
        // zlib adds 128 to `data_type` when it stopped between blocks, waiting for the next header.
        guard ended || stream.pointee.data_type & 128 != 0 else {
            inflateReset(stream)
            throw WebSocketError.protocolError(
                "compressed message does not end at a DEFLATE block boundary (RFC 7692 §7.2.1)")
        }
        if resetsAfterEachMessage || ended {
            inflateReset(stream)
            ended = false
        }
    }

    /// Drops the window and any half-read message.
    func reset() {
        inflateReset(stream)
        ended = false
    }
}

// The `z_stream` lifecycle and output step both directions share.

/// A zeroed `z_stream` set up by `initialize` (a `deflateInit2`/`inflateInit2` wrapper); `nil`,
/// with nothing left allocated, when zlib refuses the parameters or has no memory.
private func makeStream(_ initialize: (UnsafeMutablePointer<z_stream>) -> Int32) -> UnsafeMutablePointer<z_stream>? {
    let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    stream.initialize(to: z_stream())
    guard initialize(stream) == Z_OK else {
        stream.deinitialize(count: 1)
        stream.deallocate()
        return nil
    }
    return stream
}

/// Releases zlib's state with `end` (`deflateEnd`/`inflateEnd`), then the stream itself.
private func freeStream(_ stream: UnsafeMutablePointer<z_stream>, end: (UnsafeMutablePointer<z_stream>) -> Int32) {
    _ = end(stream)
    stream.deinitialize(count: 1)
    stream.deallocate()
}

/// Runs one `step` (`deflate` or `inflate` with `Z_SYNC_FLUSH`) with `chunk` as the output
/// buffer: zlib's status and how many bytes it wrote at the start of `chunk`.
private func flushStep(
    _ stream: UnsafeMutablePointer<z_stream>, into chunk: inout [UInt8], _ step: (UnsafeMutablePointer<z_stream>) -> Int32
) -> (status: Int32, produced: Int) {
    chunk.withUnsafeMutableBufferPointer { target in
        stream.pointee.next_out = target.baseAddress
        stream.pointee.avail_out = UInt32(target.count)
        let status = step(stream)
        return (status, target.count - Int(stream.pointee.avail_out))
    }
}
