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
    /// every body on one work queue shared by all its sessions: a body whose chunks come from a
    /// URLSession download in the same process would wait for that queue — pipe such a body
    /// through a file instead.
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
}

/// The body's iterator, advanced by one task at a time.
///
/// `@unchecked Sendable`: `iterator` is touched only inside `nextBlocking`, whose caller waits
/// for the task it starts to finish before returning, so two accesses never overlap; `task` is
/// guarded by `lock`.
private final class IteratorBox: @unchecked Sendable {
    private var iterator: MessageBody.Iterator
    private let lock = NSLock()
    private var task: Task<Void, Never>?

    init(_ iterator: MessageBody.Iterator) { self.iterator = iterator }

    func nextBlocking(timeout: TimeInterval) throws -> Data? {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<Result<Data?, any Error>?>(nil)
        let work: @Sendable () async -> Void = {
            do {
                let value = try await self.advance()
                result.set(.success(value))
            } catch {
                result.set(.failure(error))
            }
            done.signal()
        }
        let task: Task<Void, Never>
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {
            task = Task(executorPreference: BodyProducerExecutor.shared) { await work() }
        } else {
            task = Task { await work() }
        }
        lock.withLock { self.task = task }
        guard done.wait(timeout: .now() + timeout) == .success else {
            task.cancel()
            throw NetworkError.timedOut(nil)
        }
        return try result.current?.get() ?? nil
    }

    private func advance() async throws -> Data? { try await iterator.next() }

    func cancel() { lock.withLock { task?.cancel() } }
}
