import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier

/// A body's chunks re-cut to at most `chunkSize` bytes, each delivered after the time it takes at
/// `bytesPerSecond`, ending with a lost connection after `dropAfter` bytes.
struct ConditionedChunks: AsyncSequence, Sendable {
    typealias Element = Data

    let base: MessageBody
    let chunkSize: Int
    let bytesPerSecond: Int?
    let dropAfter: Int?
    let pause: @Sendable (Duration) async throws -> Void

    func makeAsyncIterator() -> Iterator {
        Iterator(chunks: self, base: base.makeAsyncIterator())
    }

    struct Iterator: AsyncIteratorProtocol {
        let chunks: ConditionedChunks
        var base: MessageBody.Iterator
        var pending = Data()
        var delivered = 0
        var finished = false

        init(chunks: ConditionedChunks, base: MessageBody.Iterator) {
            self.chunks = chunks
            self.base = base
        }

        mutating func next() async throws -> Data? {
            guard !finished else { return nil }
            if pending.isEmpty {
                guard let chunk = try await base.next() else {
                    finished = true
                    return nil
                }
                pending = chunk
            }
            var size = Swift.min(pending.count, Swift.max(1, chunks.chunkSize))
            if let drop = chunks.dropAfter {
                let left = drop - delivered
                if left <= 0 {
                    finished = true
                    throw NetworkError.transport(URLError(.networkConnectionLost))
                }
                size = Swift.min(size, left)
            }
            let piece = Data(pending.prefix(size))
            pending = Data(pending.dropFirst(size))
            try await chunks.pause(NetworkConditions.transferTime(piece.count, at: chunks.bytesPerSecond))
            delivered += piece.count
            return piece
        }
    }
}
