#if canImport(CCurl)
import Foundation

/// Where request body bytes come from: the request's `httpBody`, or its `httpBodyStream` read
/// without ever blocking the engine thread.
final class CurlUpload: @unchecked Sendable {
    // @unchecked: used only on the engine thread once the transfer is submitted.

    /// What one read produced.
    enum ReadResult {
        /// This many bytes were written (0 = end of body).
        case bytes(Int)
        /// The stream is open but has nothing yet: pause the upload and ask again later.
        case wouldBlock
        /// The stream failed.
        case failed
    }

    private enum Source {
        case data(Data, offset: Int)
        case stream(InputStream, opened: Bool, sent: Int)
    }

    private var source: Source
    /// The body length in bytes when known (`Content-Length`); `nil` sends it chunked.
    let length: Int?

    /// A body from bytes in memory (rewindable).
    init(data: Data) {
        source = .data(data, offset: 0)
        length = data.count
    }

    /// A body read from `stream`, of `length` bytes when known.
    init(stream: InputStream, length: Int?) {
        source = .stream(stream, opened: false, sent: 0)
        self.length = length
    }

    /// Whether a read now would make progress (bytes, end or error) rather than block.
    var isReadable: Bool {
        guard case .stream(let stream, let opened, _) = source, opened else { return true }
        switch stream.streamStatus {
        case .atEnd, .error, .closed: return true
        default: return stream.hasBytesAvailable
        }
    }

    /// Copies the next bytes into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        switch source {
        case .data(let data, let offset):
            let count = min(buffer.count, data.count - offset)
            guard count > 0 else { return .bytes(0) }
            data.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: offset..<(offset + count))
            source = .data(data, offset: offset + count)
            return .bytes(count)
        case .stream(let stream, let opened, let sent):
            if !opened { stream.open() }
            switch stream.streamStatus {
            case .atEnd, .closed: return .bytes(0)
            case .error: return .failed
            default: break
            }
            // A file stream always has bytes (or its end); a bound pair or socket may not yet.
            guard stream.hasBytesAvailable else {
                source = .stream(stream, opened: true, sent: sent)
                return .wouldBlock
            }
            guard let base = buffer.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return .failed }
            let count = stream.read(base, maxLength: buffer.count)
            source = .stream(stream, opened: true, sent: sent + max(0, count))
            return count < 0 ? .failed : .bytes(count)
        }
    }

    /// Moves back to `offset` (libcurl rewinds to resend on a reused connection that turned out
    /// closed). Only bytes in memory, or a stream not read yet, can go back.
    func seek(to offset: Int) -> Bool {
        switch source {
        case .data(let data, _):
            guard (0...data.count).contains(offset) else { return false }
            source = .data(data, offset: offset)
            return true
        case .stream(_, _, let sent):
            return offset == 0 && sent == 0
        }
    }

    /// Closes the stream, if any.
    func close() {
        if case .stream(let stream, let opened, _) = source, opened { stream.close() }
    }
}
#endif
