import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension BodyStream {
    /// A request body read from an ``MessageBody`` as URLSession sends it.
    ///
    /// - A ``MessageBody/IterationBehavior-swift.enum/multiple`` body is iterated afresh for every
    ///   send, so retries and 307/308 redirects re-send it, like ``factory(length:_:)``.
    /// - A ``MessageBody/IterationBehavior-swift.enum/single`` body (a stream from the network, a
    ///   live capture) is sent at most once, like ``once(_:length:)``: no retry, no resend after a
    ///   401, and a 307/308 fails with ``NetworkError/invalidRequest(_:)``.
    ///
    /// The length is sent as `Content-Length` on Apple platforms when it is
    /// ``MessageBody/Length-swift.enum/known(_:)``; URLSession on Linux sends every stream chunked.
    /// URLSession reads request bodies synchronously, so the reading thread waits for each chunk
    /// (at most 60 s per chunk, then ``NetworkError/timedOut(_:)``); the chunks are pulled on a
    /// dedicated thread (iOS 18/macOS 15 and Linux; the global executor before), never Swift's
    /// cooperative pool. On Linux URLSession reads
    /// every body on one work queue shared by all its sessions: while a chunk is awaited, every
    /// URLSession call of the process waits too, and a body whose chunks come from a URLSession
    /// download in the same process would wait for that queue — pipe such a body through a file,
    /// or send it over `CurlTransport`. A cancelled call (or a passed deadline) ends the wait at
    /// once and stops the producer.
    ///
    /// - Parameter body: The body; its errors fail the call.
    public init(_ body: MessageBody) {
        let length: Int? = if case .known(let count) = body.length { Int(count) } else { nil }
        let make: @Sendable () -> InputStream = { SourceInputStream.make(MessageBodySource(body)) }
        switch body.iterationBehavior {
        case .multiple: self = .factory(length: length, make)
        case .single: self = .once(make(), length: length)
        }
    }
}

/// Reads an ``MessageBody`` for a stream: the reading thread waits for each chunk, which a task
/// pulls from the body's iterator.
final class MessageBodySource: BodySource {
    /// The longest wait for one chunk before the body fails (seconds).
    static let chunkTimeout: TimeInterval = 60

    private let iterator: IteratorBox
    private var chunk = PendingBytes()
    private var ended = false

    init(_ body: MessageBody) { self.iterator = IteratorBox(body.makeAsyncIterator()) }

    func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength: Int) throws -> Int {
        while chunk.isEmpty {
            guard !ended else { return 0 }
            guard let next = try iterator.nextBlocking(timeout: Self.chunkTimeout) else {
                ended = true
                return 0
            }
            chunk = PendingBytes(next)
        }
        return chunk.read(into: buffer, maxLength: maxLength)
    }

    func close() {
        ended = true
        iterator.cancel()
    }

    func interrupt() { iterator.cancel() }

    /// The same chunks for a reader that can suspend instead of blocking a thread; `onFailure`
    /// gets the body's error (or the interruption's `CancellationError`) when a chunk fails.
    func chunks(onFailure: @escaping @Sendable (any Error) -> Void) -> BodyChunks {
        BodyChunks(box: iterator, onFailure: onFailure)
    }
}

/// The chunks of one of Courier's streamed request bodies (an ``MessageBody`` sent as a stream),
/// for a transport that awaits them instead of blocking a thread in `InputStream.read`:
/// CourierCurl's upload pump. The chunks, their order, and what cancellation does are those of the
/// stream's own reads (the stream and this share one iterator: read one or the other, never both).
/// There is no per-chunk timeout: the call's deadline ends the wait by cancelling the call.
package struct BodyChunks: Sendable {
    fileprivate let box: IteratorBox
    /// Records a failure where the stream's own reads record theirs (its `sourceFailure`), so
    /// the call ends with the body's error, not the transport's.
    fileprivate let onFailure: @Sendable (any Error) -> Void

    /// The next chunk, `nil` at the end.
    ///
    /// - Throws: The body's error; `CancellationError` once the body was interrupted
    ///   (``BodyInterruption/interrupt()``), also for a chunk that arrived meanwhile: the body
    ///   then ends with an error, never short.
    package func next() async throws -> Data? {
        do {
            return try await box.next()
        } catch {
            onFailure(error)
            throw error
        }
    }
}

/// The body's iterator, advanced by one task at a time.
///
/// Two ways read it: ``nextBlocking(timeout:)`` for a thread that must block (URLSession's reads
/// of an `InputStream`), and ``next()`` for a task that can suspend (``BodyChunks``).
///
/// `@unchecked Sendable`: `iterator` is touched by one task at a time — the one `nextBlocking`
/// starts (its caller waits for it, or returns at once after ``cancel()``, after which no task is
/// started), or the one stopping the producer, which runs only when no other is `active`; `task`,
/// `waiting`, `cancelled` and `active` are guarded by `lock`.
private final class IteratorBox: @unchecked Sendable {
    private var iterator: MessageBody.Iterator
    private let lock = NSLock()
    private var task: Task<Void, Never>?
    /// The semaphore the reading thread waits on, signalled by ``cancel()``.
    private var waiting: DispatchSemaphore?
    private var cancelled = false
    /// A task is pulling a chunk from the iterator.
    private var active = false

    init(_ iterator: MessageBody.Iterator) { self.iterator = iterator }

    func nextBlocking(timeout: TimeInterval) throws -> Data? {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<Result<Data?, any Error>?>(nil)
        // Registered before the task starts: `cancel()` then knows a task uses the iterator.
        let proceed = lock.withLock { () -> Bool in
            guard !cancelled else { return false }
            active = true
            waiting = done
            return true
        }
        guard proceed else { throw CancellationError() }
        let work: @Sendable () async -> Void = {
            let value: Data?
            do {
                value = try await self.advance()
                result.set(.success(value))
            } catch {
                value = nil
                result.set(.failure(error))
            }
            let stopProducer = self.lock.withLock { () -> Bool in
                self.active = false
                return self.cancelled
            }
            done.signal()
            // Cancelled while the chunk came: the producer is stopped all the same.
            if stopProducer, value != nil { await self.stopProducer() }
        }
        let task = Task.bodyProducer(work)
        if lock.withLock({ () -> Bool in
            self.task = task
            return cancelled
        }) {
            task.cancel()
        }
        guard done.wait(timeout: .now() + timeout) == .success else {
            task.cancel()
            throw NetworkError.timedOut(nil)
        }
        // Cancelled meanwhile: the body ends with an error, never short — the producer's iterator
        // answers `nil` to its task's cancellation, and a stream read to its end would send the
        // body so far as if it were whole.
        let wasCancelled = lock.withLock { () -> Bool in
            waiting = nil
            return cancelled
        }
        guard !wasCancelled, let outcome = result.current else { throw CancellationError() }
        return try outcome.get()
    }

    /// The next chunk, awaited by the calling task (no thread waits): the chunk protocol of
    /// ``nextBlocking(timeout:)``, without its timeout. The caller's task is the one that ends
    /// the producer's `next()` when cancelled: ``cancel()`` alone does not interrupt it.
    func next() async throws -> Data? {
        let proceed = lock.withLock { () -> Bool in
            guard !cancelled else { return false }
            active = true
            return true
        }
        guard proceed else { throw CancellationError() }
        let outcome: Result<Data?, any Error>
        do {
            outcome = .success(try await advance())
        } catch {
            outcome = .failure(error)
        }
        let wasCancelled = lock.withLock { () -> Bool in
            active = false
            return cancelled
        }
        guard !wasCancelled else {
            // Cancelled while the chunk came: the producer is stopped all the same, and the body
            // ends with an error, never short.
            if case .success(.some) = outcome { await stopProducer() }
            throw CancellationError()
        }
        return try outcome.get()
    }

    /// Ends the producer: the iterator's `next()` in a cancelled task (an `AsyncStream` then
    /// terminates, and its `onTermination` runs). Only when no other task uses the iterator.
    private func stopProducer() async {
        withUnsafeCurrentTask { $0?.cancel() }
        _ = try? await advance()  // the producer's answer to its cancellation is not needed
    }

    private func advance() async throws -> Data? { try await iterator.next() }

    /// Cancels the producer and ends a wait for its chunk at once, on any thread.
    func cancel() {
        let idle = lock.withLock { () -> Bool in
            let first = !cancelled
            cancelled = true
            task?.cancel()
            waiting?.signal()
            return first && !active
        }
        // No task is pulling a chunk: one stops the producer now (none will pull again).
        if idle { Task { await self.stopProducer() } }
    }
}
