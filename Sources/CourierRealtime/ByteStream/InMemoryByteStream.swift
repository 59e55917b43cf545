import Courier

/// One end of an in-memory byte pipe: what one end writes, the other reads. Used to test the RFC
/// 6455 client against a scripted peer without sockets.
package final class InMemoryByteStream: ByteStream {
    private struct Side: Sendable {
        var buffer: [UInt8] = []
        var closed = false
        var reader: CheckedContinuation<Void, Never>?
        /// Writers waiting for room in `buffer` (a full "TCP window").
        var writers: [CheckedContinuation<Void, Never>] = []
    }

    /// Shared between the two ends: `sides[0]` is what end 0 reads, `sides[1]` what end 1 reads.
    private final class Pipe: Sendable {
        let sides = Locked([Side(), Side()])
        /// Bytes a side buffers unread before writes to it wait (nil: unbounded).
        let capacity: Int?
        init(capacity: Int?) { self.capacity = capacity }
    }

    private let pipe: Pipe
    private let index: Int

    private init(pipe: Pipe, index: Int) {
        self.pipe = pipe
        self.index = index
    }

    /// Two connected ends (client, server). With `capacity`, each direction buffers at most that
    /// many unread bytes and a write waits for the reader (a peer that stops reading blocks it).
    package static func pair(capacity: Int? = nil) -> (client: InMemoryByteStream, server: InMemoryByteStream) {
        let pipe = Pipe(capacity: capacity.map { max(1, $0) })
        return (InMemoryByteStream(pipe: pipe, index: 0), InMemoryByteStream(pipe: pipe, index: 1))
    }

    package func read(maximumLength: Int) async throws -> [UInt8] {
        while true {
            enum Step {
                case bytes([UInt8])
                case wait
            }
            let step: Step = pipe.sides.withLock { sides in
                if !sides[index].buffer.isEmpty {
                    let count = min(maximumLength, sides[index].buffer.count)
                    let bytes = Array(sides[index].buffer.prefix(count))
                    sides[index].buffer.removeFirst(count)
                    return .bytes(bytes)
                }
                return sides[index].closed ? .bytes([]) : .wait
            }
            if case .bytes(let bytes) = step {
                if !bytes.isEmpty { wakeWriters(of: index) }
                return bytes
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow: Bool = pipe.sides.withLock { sides in
                    if !sides[index].buffer.isEmpty || sides[index].closed { return true }
                    sides[index].reader = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
    }

    package func write(_ bytes: [UInt8]) async throws {
        let other = 1 - index
        var offset = 0
        while true {
            enum Step {
                case wrote(CheckedContinuation<Void, Never>?, done: Bool)
                case wait
            }
            let step: Step = try pipe.sides.withLock { sides in
                guard !sides[index].closed, !sides[other].closed else { throw WebSocketError.notConnected }
                let room = pipe.capacity.map { max(0, $0 - sides[other].buffer.count) } ?? (bytes.count - offset)
                guard room > 0 || offset == bytes.count else { return .wait }
                let count = min(room, bytes.count - offset)
                sides[other].buffer += bytes[offset..<(offset + count)]
                offset += count
                defer { sides[other].reader = nil }
                return .wrote(sides[other].reader, done: offset == bytes.count)
            }
            switch step {
            case .wrote(let reader, let done):
                reader?.resume()
                if done { return }
            case .wait:
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow: Bool = pipe.sides.withLock { sides in
                        let full = pipe.capacity.map { sides[other].buffer.count >= $0 } ?? false
                        if !full || sides[index].closed || sides[other].closed { return true }
                        sides[other].writers.append(continuation)
                        return false
                    }
                    if resumeNow { continuation.resume() }
                }
            }
        }
    }

    /// Resumes the writers waiting for room in side `side`'s buffer.
    private func wakeWriters(of side: Int) {
        let writers: [CheckedContinuation<Void, Never>] = pipe.sides.withLock { sides in
            defer { sides[side].writers = [] }
            return sides[side].writers
        }
        for writer in writers { writer.resume() }
    }

    /// Closes both directions (like a TCP close): both ends read EOF after buffered bytes.
    package func close() {
        let readers: [CheckedContinuation<Void, Never>] = pipe.sides.withLock { sides in
            var readers: [CheckedContinuation<Void, Never>] = []
            for side in 0..<2 {
                sides[side].closed = true
                if let reader = sides[side].reader { readers.append(reader) }
                sides[side].reader = nil
                readers += sides[side].writers
                sides[side].writers = []
            }
            return readers
        }
        for reader in readers { reader.resume() }
    }
}
