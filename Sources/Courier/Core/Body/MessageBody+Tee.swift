import Foundation

extension MessageBody {
    /// This body, with the bytes its consumer reads also collected — up to `limit` bytes — and
    /// handed to `onComplete` once the consumer reached the end. A body longer than `limit` is
    /// passed on without keeping more of it, and `onComplete` is not called; nor is it for a body
    /// that fails, is abandoned, or ends short of its announced length. Used by the HTTP cache to store a streamed response while the
    /// caller reads it; nothing is buffered ahead of the consumer.
    package func teed(upTo limit: Int, onComplete: @escaping @Sendable (Data) async -> Void) -> MessageBody {
        MessageBody(wrapping: self, chunks: TeeChunks(base: self, limit: limit, onComplete: onComplete)) { [self] sink, admits in
            let collected = Locked<Data?>(Data())
            try await push(
                to: { chunk in
                    collected.withLock { held in
                        if let kept = held { held = kept.count + chunk.count <= limit ? kept + chunk : nil }
                    }
                    try sink(chunk)
                }, admittingProducerThread: admits)
            let expected: Int64? = if case .known(let count) = length { count } else { nil }
            if let whole = collected.current, TeeChunks.Iterator.isWhole(whole, length: expected) { await onComplete(whole) }
        }
    }
}

/// The chunks of a body, copied aside while they pass (see ``MessageBody/teed(upTo:onComplete:)``).
private struct TeeChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let base: MessageBody
    let limit: Int
    let onComplete: @Sendable (Data) async -> Void

    func makeAsyncIterator() -> Iterator {
        let expected: Int64? = if case .known(let count) = base.length { Int64(count) } else { nil }
        return Iterator(base: base.makeAsyncIterator(), limit: limit, expected: expected, onComplete: onComplete)
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: MessageBody.Iterator
        let limit: Int
        let onComplete: @Sendable (Data) async -> Void
        var collected: Data? = Data()

        /// The body's announced length, when known.
        let expected: Int64?

        init(
            base: MessageBody.Iterator, limit: Int, expected: Int64?, onComplete: @escaping @Sendable (Data) async -> Void
        ) {
            self.base = base
            self.limit = limit
            self.expected = expected
            self.onComplete = onComplete
        }

        static func isWhole(_ collected: Data, length: Int64?) -> Bool {
            length.map { Int64(collected.count) == $0 } ?? true
        }

        mutating func next() async throws -> Data? {
            guard let chunk = try await base.next() else {
                // A body that ended short of its announced length is not the representation.
                if let collected, Self.isWhole(collected, length: expected) {
                    self.collected = nil
                    await onComplete(collected)
                }
                return nil
            }
            if let held = collected {
                collected = held.count + chunk.count <= limit ? held + chunk : nil
            }
            return chunk
        }
    }
}
