import Courier

/// One end of an in-memory byte pipe: what one end writes, the other reads. Used to test the RFC
/// 6455 client against a scripted peer without sockets.
package final class InMemoryByteStream: ByteStream {
    private struct Side: Sendable {
        var buffer: [UInt8] = []
        var closed = false
        var reader: CheckedContinuation<Void, Never>?
    }

    /// Shared between the two ends: `sides[0]` is what end 0 reads, `sides[1]` what end 1 reads.
    private final class Pipe: Sendable {
        let sides = Locked([Side(), Side()])
    }

    private let pipe: Pipe
    private let index: Int

    private init(pipe: Pipe, index: Int) {
        self.pipe = pipe
        self.index = index
    }

    /// Two connected ends (client, server).
    package static func pair() -> (client: InMemoryByteStream, server: InMemoryByteStream) {
        let pipe = Pipe()
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
            if case .bytes(let bytes) = step { return bytes }
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
        let reader: CheckedContinuation<Void, Never>? = try pipe.sides.withLock { sides in
            guard !sides[index].closed, !sides[other].closed else { throw WebSocketError.notConnected }
            sides[other].buffer += bytes
            defer { sides[other].reader = nil }
            return sides[other].reader
        }
        reader?.resume()
    }

    /// Closes both directions (like a TCP close): both ends read EOF after buffered bytes.
    package func close() {
        let readers: [CheckedContinuation<Void, Never>] = pipe.sides.withLock { sides in
            var readers: [CheckedContinuation<Void, Never>] = []
            for side in 0..<2 {
                sides[side].closed = true
                if let reader = sides[side].reader { readers.append(reader) }
                sides[side].reader = nil
            }
            return readers
        }
        for reader in readers { reader.resume() }
    }
}
