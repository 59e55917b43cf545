import Foundation

/// How the reading of a streamed body ended, as a ``MessageBody/counted(onEnd:)`` wrapper saw it.
package enum BodyReadOutcome: Sendable {
    /// The consumer read the body to its end.
    case completed
    /// The body ended with `error` (a lost connection, a time limit, the consumer's task cancelled).
    case failed(any Error)
    /// The consumer dropped the body, or its iterator, before the end (the transfer is cancelled).
    case abandoned
}

extension MessageBody {
    /// This body, with the bytes its consumer reads counted as they pass; `onEnd` is called once
    /// with the count when the reading ends: at the end of the body, when it fails, or when the
    /// body (or its iterator) is dropped before the end — a body nobody reads reports
    /// ``BodyReadOutcome/abandoned`` with 0 bytes when its last copy goes away.
    ///
    /// Nothing is read ahead of the consumer (back-pressure is the consumer's), and the body can
    /// still be interrupted and cancelled like this one. `onEnd` runs on the consumer's task (or
    /// wherever the last copy is released): keep it quick. Used by the logging and metrics
    /// interceptors to report a streamed body's real size.
    package func counted(onEnd: @escaping @Sendable (_ bytes: Int64, _ outcome: BodyReadOutcome) -> Void) -> MessageBody {
        let counter = BodyCounter(onEnd: onEnd)
        return MessageBody(wrapping: self, chunks: CountingChunks(base: self, counter: counter)) { [self] sink, admits in
            guard counter.claim() else { return try await push(to: sink, admittingProducerThread: admits) }
            // A sink that throws is a consumer that stopped reading, as one dropping its iterator.
            let sinkThrew = Locked(false)
            do {
                try await push(
                    to: { chunk in
                        counter.add(chunk.count)
                        do { try sink(chunk) } catch {
                            sinkThrew.set(true)
                            throw error
                        }
                    }, admittingProducerThread: admits)
                counter.end(.completed)
            } catch {
                counter.end(sinkThrew.current ? .abandoned : .failed(error))
                throw error
            }
        }
    }
}

/// The count of one body, reported once.
private final class BodyCounter: Sendable {
    private let state = Locked((bytes: Int64(0), reported: false, claimed: false))
    private let onEnd: @Sendable (Int64, BodyReadOutcome) -> Void

    init(onEnd: @escaping @Sendable (Int64, BodyReadOutcome) -> Void) { self.onEnd = onEnd }

    /// `true` for the first iterator only: later ones (a second reader of a single-use body gets
    /// ``MessageBodyError/alreadyIterated``) neither count nor report.
    func claim() -> Bool {
        state.withLock { state in
            defer { state.claimed = true }
            return !state.claimed
        }
    }

    func add(_ count: Int) { state.withLock { $0.bytes += Int64(count) } }

    /// Reports `outcome` with the count so far, unless something was reported already.
    func end(_ outcome: BodyReadOutcome) {
        let bytes: Int64? = state.withLock { state in
            guard !state.reported else { return nil }
            state.reported = true
            return state.bytes
        }
        if let bytes { onEnd(bytes, outcome) }
    }

    deinit { end(.abandoned) }  // never iterated, or iterated and dropped (no effect once reported)
}

/// Ends the count as abandoned when the one iterator goes away before the body ended.
private final class CountingLease: Sendable {
    let counter: BodyCounter
    init(_ counter: BodyCounter) { self.counter = counter }
    deinit { counter.end(.abandoned) }  // no effect once the body ended
}

/// The chunks of a body, counted while they pass (see ``MessageBody/counted(onEnd:)``).
private struct CountingChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let base: MessageBody
    let counter: BodyCounter

    func makeAsyncIterator() -> Iterator {
        Iterator(base: base.makeAsyncIterator(), lease: counter.claim() ? CountingLease(counter) : nil)
    }

    struct Iterator: AsyncIteratorProtocol {
        var base: MessageBody.Iterator
        let lease: CountingLease?

        mutating func next() async throws -> Data? {
            guard let counter = lease?.counter else { return try await base.next() }
            do {
                guard let chunk = try await base.next() else {
                    counter.end(.completed)
                    return nil
                }
                counter.add(chunk.count)
                return chunk
            } catch {
                counter.end(.failed(error))
                throw error
            }
        }
    }
}

extension HTTPResponse {
    /// Whether the body is a stream still to be read by the consumer: not in memory, and not empty
    /// by definition — a 1xx, 204 or 304 response (RFC 9110 §6.4.1) or a known length of 0.
    package var hasStreamedBody: Bool {
        guard !body.isBuffered, body.length != .known(0) else { return false }
        return !(100..<200).contains(statusCode) && statusCode != 204 && statusCode != 304
    }
}
