#if canImport(CCurl)
import Foundation

/// Where request body bytes come from: the request's `httpBody`, or its `httpBodyStream` read by a
/// ``CurlUploadPump`` so that the engine thread never blocks on it.
final class CurlUpload: @unchecked Sendable {
    // @unchecked: used only under the engine's lock once the transfer is started (the pump has
    // its own lock).

    /// What one read produced.
    enum ReadResult {
        /// This many bytes were written (0 = end of body).
        case bytes(Int)
        /// The stream is open but has nothing yet: pause the upload until the pump says so.
        case wouldBlock
        /// The stream failed.
        case failed
    }

    private enum Source {
        case data(Data, offset: Int)
        case stream(InputStream, CurlUploadPump, started: Bool)
    }

    private var source: Source
    private var taken = 0
    /// The body length in bytes when known (`Content-Length`); `nil` sends it chunked.
    let length: Int?

    /// A body from bytes in memory (rewindable). A slice (`whole[10...]`, whose indices start
    /// where it was cut) is copied to a zero-based `Data`: reads and seeks count from 0.
    init(data: Data) {
        source = .data(data.startIndex == 0 ? data : Data(data), offset: 0)
        length = data.count
    }

    /// A body read from `stream`, of `length` bytes when known.
    init(stream: InputStream, length: Int?) {
        source = .stream(stream, CurlUploadPump(), started: false)
        self.length = length
    }

    /// Copies the next bytes into `buffer`; `onReadable` is how a paused upload is woken.
    func read(into buffer: UnsafeMutableRawBufferPointer, onReadable: @escaping @Sendable () -> Void) -> ReadResult {
        switch source {
        case .data(let data, let offset):
            let count = min(buffer.count, data.count - offset)
            guard count > 0 else { return .bytes(0) }
            data.copyBytes(to: buffer.bindMemory(to: UInt8.self), from: offset..<(offset + count))
            source = .data(data, offset: offset + count)
            return .bytes(count)
        case .stream(let stream, let pump, let started):
            if !started {
                pump.start(stream, onReadable: onReadable)
                source = .stream(stream, pump, started: true)
            }
            guard let length else {
                let result = pump.take(into: buffer)
                if case .bytes(let count) = result { taken += count }
                return result
            }
            return read(from: pump, into: buffer, declared: length)
        }
    }

    /// A stream of declared `length` (sent as `Content-Length`) gives exactly that many bytes:
    /// libcurl stops reading at the length, so a longer stream would be cut there without a word
    /// (the server acting on part of the app's data), and a shorter one would leave the server
    /// waiting. The last declared byte is held back until the pump knows whether the stream ends
    /// right after it; a stream of another length fails the upload
    /// (`URLError.requestBodyStreamExhausted`) before the server has the whole declared body.
    private func read(
        from pump: CurlUploadPump, into buffer: UnsafeMutableRawBufferPointer, declared length: Int
    )
        -> ReadResult
    {
        let remaining = length - taken
        let (buffered, finished, failed) = pump.state(waitIfUndecided: false)
        if failed { return .failed }
        if buffered > remaining { return .failed }  // longer than declared
        if finished && buffered < remaining { return .failed }  // ended short of it
        if remaining == 0 { return .bytes(0) }  // finished, nothing left: the exact length
        // Until the end is known, the last declared byte stays in the pump.
        let limit = min(buffer.count, finished ? remaining : remaining - 1, buffered)
        guard limit > 0 else {
            // Nothing may go yet: wait for more bytes or the end (the pump wakes the upload). What
            // arrived between the two looks is used at once.
            let now = pump.state(waitIfUndecided: true)
            guard now.finished || now.failed || now.buffered != buffered else { return .wouldBlock }
            return read(from: pump, into: buffer, declared: length)
        }
        let result = pump.take(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<limit]))
        if case .bytes(let count) = result { taken += count }
        return result
    }

    /// Moves back to `offset` (libcurl rewinds to resend on a reused connection that turned out
    /// closed). Bytes in memory can go back anywhere; a stream only to its start, and only before
    /// libcurl took any of it.
    func seek(to offset: Int) -> Bool {
        switch source {
        case .data(let data, _):
            guard (0...data.count).contains(offset) else { return false }
            source = .data(data, offset: offset)
            return true
        case .stream:
            return offset == 0 && taken == 0
        }
    }

    /// Stops the pump, if any.
    func close() {
        if case .stream(_, let pump, _) = source { pump.close() }
    }
}
#endif
