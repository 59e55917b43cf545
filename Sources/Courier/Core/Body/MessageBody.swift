import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A body as an asynchronous sequence of byte chunks: either bytes already in memory or bytes still
/// arriving from the network (or any other producer).
///
/// A body says how long it is when that is known (``length-swift.property``) and whether it can be
/// iterated more than once (``iterationBehavior-swift.property``). A body from the network is
/// ``IterationBehavior-swift.enum/single``: its bytes are handed over once and never kept, so
/// memory stays bounded by the stream's buffer (``StreamingOptions/bufferLimit``), and iterating
/// it a second time throws ``MessageBodyError/alreadyIterated`` rather than yielding nothing.
///
/// ```swift
/// let handle = try FileHandle(forWritingTo: videoURL)
/// let stream = try await client.stream(ExportOrders())
/// for try await chunk in stream.body {           // Data chunks, at most ~16–64 KiB each
///     try handle.write(contentsOf: chunk)
/// }
/// ```
///
/// Cancelling the consuming task, or dropping the iterator before the end, cancels the transfer
/// at once. Errors thrown while iterating are ``NetworkError``s (a connection lost mid-body is
/// ``NetworkError/transport(_:)`` or ``NetworkError/offline(_:)``), or ``MessageBodyError``.
public struct MessageBody: AsyncSequence, Sendable {
    /// One chunk of bytes, never empty.
    public typealias Element = Data

    /// The body's length, when known in advance.
    public enum Length: Sendable, Hashable {
        /// Exactly this many bytes (for a response: `Content-Length` of an identity-encoded body).
        case known(Int64)
        /// Not known until the end (chunked transfer coding, a compressed body, a live feed).
        case unknown
    }

    /// Whether a body can be iterated more than once.
    public enum IterationBehavior: Sendable, Hashable {
        /// Only once: a second iteration throws ``MessageBodyError/alreadyIterated``.
        case single
        /// Any number of times, each yielding the same bytes.
        case multiple
    }

    /// The length, when known.
    public let length: Length
    /// Whether the body can be iterated more than once.
    public let iterationBehavior: IterationBehavior
    private let source: Source

    private enum Source: Sendable {
        case bytes(Data)
        case buffer(BufferOwner)
        case sequence(@Sendable () -> AnyChunkIterator, IterationGuard?)
        /// A wrapper over a transport's body: iterated through the wrapper (whose inner iterator
        /// claims the buffer for single use), interrupted through the transport's buffer; pushed
        /// through the wrapper's sink when it has one (``push(to:admittingProducerThread:)``).
        case wrapped(@Sendable () -> AnyChunkIterator, BufferOwner, push: Pusher?)
    }

    /// Delivers a body to a sink (see ``push(to:admittingProducerThread:)``).
    package typealias Pusher =
        @Sendable (@escaping StreamBuffer.Sink, _ admits: @escaping @Sendable () -> Bool) async throws -> Void

    /// A body of bytes already in memory; iterable any number of times, as one chunk.
    ///
    /// - Parameter data: The bytes.
    public init(_ data: Data) {
        self.length = .known(Int64(data.count))
        self.iterationBehavior = .multiple
        self.source = .bytes(data)
    }

    /// A body whose chunks come from `sequence`.
    ///
    /// - Parameters:
    ///   - sequence: The chunks; empty chunks are skipped. Errors it throws reach the consumer.
    ///   - length: The total length in bytes, when known.
    ///   - iterationBehavior: ``IterationBehavior-swift.enum/multiple`` only when iterating
    ///     `sequence` again yields the same bytes again.
    public init<S: AsyncSequence & Sendable>(
        _ sequence: S, length: Length = .unknown, iterationBehavior: IterationBehavior = .single
    ) where S.Element == Data {
        self.length = length
        self.iterationBehavior = iterationBehavior
        self.source = .sequence(
            { AnyChunkIterator(sequence.makeAsyncIterator()) },
            iterationBehavior == .single ? IterationGuard() : nil)
    }

    /// A body over `chunks` that keeps `base`'s length and iteration behaviour and can still be
    /// interrupted like `base` (``limited(to:deadlines:)``) — for wrappers such as the cache's tee.
    ///
    /// - Parameter push: How the wrapper delivers the body to a sink (``push(to:admittingProducerThread:)``), usually by
    ///   pushing `base` through a sink of its own; without it a pushed body is iterated.
    package init<S: AsyncSequence & Sendable>(wrapping base: MessageBody, chunks: S, push: Pusher? = nil)
    where S.Element == Data {
        self.length = base.length
        self.iterationBehavior = base.iterationBehavior
        switch base.source {
        case .buffer(let owner), .wrapped(_, let owner, _):
            self.source = .wrapped({ AnyChunkIterator(chunks.makeAsyncIterator()) }, owner, push: push)
        default:
            self.source = .sequence(
                { AnyChunkIterator(chunks.makeAsyncIterator()) }, base.iterationBehavior == .single ? IterationGuard() : nil)
        }
    }

    /// A single-use body fed by a transport through `buffer`.
    package init(buffer: StreamBuffer, length: Length) {
        self.length = length
        self.iterationBehavior = .single
        self.source = .buffer(BufferOwner(buffer))
    }

    /// This body ending with ``NetworkError/timedOut(_:)`` once `limit` has passed (a streamed
    /// call's ``StreamingOptions/maxDuration``). Only a transport's body can be interrupted; other
    /// bodies are returned as they are.
    func limited(to limit: Duration, deadlines: any DeadlineScheduling) -> MessageBody {
        guard let owner = bufferOwner else { return self }
        let buffer = owner.buffer
        guard limit > .zero else {
            buffer.abort(with: .timedOut(nil))
            return self
        }
        _ = deadlines.schedule(after: limit) { buffer.abort(with: .timedOut(nil)) }
        // The client's scheduler cancels its timers when the client goes away; the body may
        // outlive the client, so it keeps the scheduler (and the timer) alive while it lives.
        owner.keepAlive(deadlines)
        return self
    }

    /// This body ending with ``NetworkError/timedOut(_:)`` once no byte arrived for `idle` (a
    /// streamed call's ``StreamingOptions/idleTimeout``), measured by Courier on the client's
    /// clock to the precision of that clock, on every transport: a paused transfer (the consumer
    /// is behind) never counts as silent. Only a transport's body can be watched; other bodies are
    /// returned as they are.
    func idleLimited(to idle: Duration, deadlines: any DeadlineScheduling) -> MessageBody {
        guard let owner = bufferOwner else { return self }
        IdleTimer.start(idle: idle, buffer: owner.buffer, deadlines: deadlines)
        owner.keepAlive(deadlines)
        return self
    }

    /// The transport's buffer feeding this body, `nil` for a body in memory (tests and the bench
    /// read its ``StreamBuffer/peakBufferedByteCount``).
    package var streamBuffer: StreamBuffer? { bufferOwner?.buffer }

    /// The owner of a transport's buffer, for the bodies a transport feeds.
    private var bufferOwner: BufferOwner? {
        switch source {
        case .buffer(let owner), .wrapped(_, let owner, _): return owner
        default: return nil
        }
    }

    /// The body's bytes when they are already in memory (a buffered body), else `nil`.
    package var bufferedBytes: Data? {
        if case .bytes(let data) = source { return data }
        return nil
    }

    /// `true` when the bytes are in memory (made from `Data`: a buffered call, a stub, a cached
    /// entry); `false` for bytes still arriving from the network or another producer.
    public var isBuffered: Bool { bufferedBytes != nil }

    /// Creates the iterator. For a ``IterationBehavior-swift.enum/single`` body, only the first
    /// iterator yields bytes; later ones throw ``MessageBodyError/alreadyIterated`` on their first
    /// `next()`.
    public func makeAsyncIterator() -> Iterator {
        switch source {
        case .bytes(let data):
            return Iterator(.bytes(data.isEmpty ? nil : data))
        case .buffer(let owner):
            guard owner.claim() else { return Iterator(.failed(.alreadyIterated)) }
            return Iterator(.buffer(BufferLease(owner)))
        case .sequence(let make, let guardian):
            if let guardian, !guardian.claim() { return Iterator(.failed(.alreadyIterated)) }
            return Iterator(.sequence(make()))
        case .wrapped(let make, _, _):
            // The wrapped body's own iterator claims the transport's buffer (single use).
            return Iterator(.sequence(make()))
        }
    }

    /// Hands every chunk of the body to `sink`, in order, and returns at the end of the body —
    /// instead of iterating it. A transport's body whose producer allows it (URLSession's delegate
    /// queue) calls `sink` on the producer's thread as each chunk arrives, so no chunk waits in a
    /// buffer and the transfer is never paused or held for a reader, as long as
    /// `admittingProducerThread` answers `true` (see
    /// `StreamBuffer.deliver(to:admittingProducerThread:)`): `sink` must be quick (a file write,
    /// not a wait for another task). Other bodies call it on the calling thread. Wrappers that
    /// count or copy the body see every chunk, as when iterated.
    ///
    /// - Throws: What `sink` threw (the transfer is then cancelled), or what iterating throws.
    package func push(
        to sink: @escaping StreamBuffer.Sink, admittingProducerThread admits: @escaping @Sendable () -> Bool = { true }
    ) async throws {
        switch source {
        case .bytes(let data):
            if !data.isEmpty { try sink(data) }
        case .buffer(let owner):
            guard owner.claim() else { throw MessageBodyError.alreadyIterated }
            let lease = BufferLease(owner)
            defer { lease.finished() }
            try await owner.buffer.deliver(to: sink, admittingProducerThread: admits)
        case .wrapped(_, _, let push?):
            try await push(sink, admits)
        case .sequence, .wrapped:
            for try await chunk in self { try sink(chunk) }
        }
    }

    /// Reads the whole body into memory.
    ///
    /// - Parameter maxBytes: The most bytes accepted.
    /// - Returns: The bytes.
    /// - Throws: ``MessageBodyError/tooLarge(maxBytes:)`` as soon as the body exceeds `maxBytes`
    ///   (the rest is not read and the transfer is cancelled); ``NetworkError`` for a failed
    ///   transfer; ``MessageBodyError/alreadyIterated`` for a single-use body read before.
    public func collect(upTo maxBytes: Int) async throws -> Data {
        if case .bytes(let data) = source {
            guard data.count <= maxBytes else { throw MessageBodyError.tooLarge(maxBytes: maxBytes) }
            return data
        }
        if case .known(let total) = length, total > maxBytes { throw MessageBodyError.tooLarge(maxBytes: maxBytes) }
        var collected = Data()
        if case .known(let total) = length { collected.reserveCapacity(Int(total)) }
        for try await chunk in self {
            guard collected.count + chunk.count <= maxBytes else { throw MessageBodyError.tooLarge(maxBytes: maxBytes) }
            collected.append(chunk)
        }
        return collected
    }

    /// Iterates an ``MessageBody``'s chunks.
    public struct Iterator: AsyncIteratorProtocol {
        private var state: State

        fileprivate enum State {
            case bytes(Data?)
            case buffer(BufferLease)
            case sequence(AnyChunkIterator)
            case failed(MessageBodyError)
            case done
        }

        fileprivate init(_ state: State) { self.state = state }

        /// The next chunk, or `nil` at the end.
        ///
        /// - Throws: ``NetworkError`` for a failed or cancelled transfer, ``MessageBodyError``.
        public mutating func next() async throws -> Data? {
            switch state {
            case .bytes(let data):
                state = .done
                return data
            case .buffer(let lease):
                do {
                    guard let chunk = try await lease.buffer.next() else {
                        lease.finished()
                        state = .done
                        return nil
                    }
                    return chunk
                } catch {
                    lease.finished()
                    state = .done
                    throw error
                }
            case .sequence(let iterator):
                while true {
                    guard let chunk = try await iterator.next() else {
                        state = .done
                        return nil
                    }
                    if !chunk.isEmpty { return chunk }
                }
            case .failed(let error):
                state = .done
                throw error
            case .done:
                return nil
            }
        }
    }
}

/// What can go wrong with an ``MessageBody`` itself (not the network).
public enum MessageBodyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A single-use body (one from the network) was iterated a second time.
    case alreadyIterated
    /// ``MessageBody/collect(upTo:)`` found more than `maxBytes` bytes.
    case tooLarge(maxBytes: Int)
    /// A line of ``MessageBody/lines(maxLineLength:)`` or ``MessageBody/ndjson(as:decoder:maxLineLength:)``
    /// is longer than `maxBytes` bytes.
    case lineTooLong(maxBytes: Int)
    /// Line `number` (1-based) of an NDJSON body is not a value of the expected type; `reason` is
    /// the decoder's explanation (coding path and what was expected).
    case undecodableLine(number: Int, reason: String)

    /// A sentence for logs.
    public var description: String {
        switch self {
        case .alreadyIterated: return "the body can be read only once and was already read"
        case .tooLarge(let maxBytes): return "the body is larger than the \(maxBytes) bytes allowed"
        case .lineTooLong(let maxBytes): return "a line of the body is longer than the \(maxBytes) bytes allowed"
        case .undecodableLine(let number, let reason): return "line \(number) of the body could not be decoded: \(reason)"
        }
    }
}

/// Claims a single-use body for its first iterator.
private final class IterationGuard: Sendable {
    private let claimed = Locked(false)

    func claim() -> Bool {
        claimed.withLock { claimed in
            defer { claimed = true }
            return !claimed
        }
    }
}

/// Owns a transport's buffer for every copy of one ``MessageBody``: hands it to the first iterator
/// only, and cancels the transfer when the body is dropped without being read to the end (a
/// response nobody iterates must not keep a connection, or a paused task, alive).
private final class BufferOwner: Sendable {
    let buffer: StreamBuffer
    private let iteration = IterationGuard()
    private let retained = Locked<[any Sendable]>([])

    init(_ buffer: StreamBuffer) { self.buffer = buffer }

    /// Keeps `object` alive as long as the body (a time limit's scheduler).
    func keepAlive(_ object: any Sendable) { retained.withLock { $0.append(object) } }

    /// `true` for the first iterator only (see ``IterationGuard``).
    func claim() -> Bool { iteration.claim() }

    deinit { buffer.cancel() }  // no effect once the body ended
}

/// Holds a transport's buffer for one iterator: when the last copy of the iterator goes away
/// before the body ended, the transfer is cancelled (even while the body value itself lives on).
private final class BufferLease: Sendable {
    private let owner: BufferOwner
    var buffer: StreamBuffer { owner.buffer }
    private let ended = Locked(false)

    init(_ owner: BufferOwner) { self.owner = owner }

    func finished() { ended.set(true) }

    deinit {
        if !ended.current { buffer.cancel() }
    }
}

/// A type-erased iterator of chunks, shared by reference so `MessageBody.Iterator` stays a value.
private final class AnyChunkIterator: @unchecked Sendable {
    // Only the one task that iterates touches `advance` (an iterator is not shared across tasks).
    private let advance: () async throws -> Data?

    init<I: AsyncIteratorProtocol>(_ iterator: I) where I.Element == Data {
        var iterator = iterator
        advance = { try await iterator.next() }
    }

    func next() async throws -> Data? { try await advance() }
}
