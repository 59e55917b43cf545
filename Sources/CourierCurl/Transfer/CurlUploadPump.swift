#if canImport(CCurl)
import Courier
import Foundation

/// Reads a request body `InputStream` on a worker thread into a small bounded buffer, so the
/// engine thread never blocks on it: on Linux `hasBytesAvailable` answers `true` for a pipe or
/// socket with nothing in it and `read` then blocks, which would stall every transfer of the
/// transport. The read callback takes bytes from the buffer and pauses the upload
/// (`CURL_READFUNC_PAUSE`) when it is empty; the pump calls `onReadable` when bytes (or the end)
/// arrive for a waiting upload. A full buffer stops the reader: memory stays bounded both ways.
///
/// One of Courier's own streams over an ``MessageBody`` (`InputStream.bodyChunks`) is not read on
/// a thread: a task awaits its chunks, and waits for room in the buffer, holding no thread. A
/// blocked read held a libdispatch thread for as long as the producer was slow, and those are
/// capped (255 on Linux).
final class CurlUploadPump: @unchecked Sendable {
    // @unchecked: every mutable property is guarded by `condition`.
    private let condition = NSCondition()
    private var buffer = PendingBytes()
    private var finished = false
    private var failed = false
    private var closed = false
    private var waiting = false
    /// Ends a read waiting in the stream (Courier's body streams), for ``close()``.
    private var interruption: BodyInterruption?
    /// The task awaiting a ``BodyChunks`` body, cancelled by ``close()``.
    private var task: Task<Void, Never>?
    /// The task's wait for room in the buffer, resumed by ``take(into:)`` and ``close()``.
    private var roomWaiter: CheckedContinuation<Void, Never>?
    private let capacity: Int

    /// - Parameter capacity: Bytes read ahead at most.
    init(capacity: Int = 256 << 10) {
        self.capacity = capacity
    }

    /// Starts reading `stream` (opened here): in a task when it is one of Courier's streams over an
    /// ``MessageBody``, else on a worker thread; `onReadable` runs there.
    func start(_ stream: InputStream, onReadable: @escaping @Sendable () -> Void) {
        condition.lock()
        interruption = stream.bodyInterruption
        condition.unlock()
        let box = UncheckedStream(stream)
        if let chunks = stream.bodyChunks {
            let pull: @Sendable () async -> Void = { [self] in
                await self.pull(chunks, onReadable: onReadable)
                box.stream.close()  // releases the body (the chunks are read: nothing else is)
            }
            // The producer's code runs where the blocking path runs it: not on Swift's pool.
            let task = Task.bodyProducer(pull)
            let closed: Bool = condition.withLock {
                self.task = task
                return self.closed
            }
            if closed { task.cancel() }
            return
        }
        // A serial queue of its own, not a global one: a global queue is as wide as the cores,
        // so reads that block there hold its threads (libdispatch adds one about a second after
        // all are blocked); a serial queue gets a thread of its own for as long as a read blocks.
        DispatchQueue(label: "courier.curl.upload-pump", qos: .userInitiated).async { [self] in
            pump(box.stream, onReadable: onReadable)
        }
    }

    private func pump(_ stream: InputStream, onReadable: @Sendable () -> Void) {
        stream.open()
        defer { stream.close() }
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            condition.lock()
            while buffer.count >= capacity && !closed { condition.wait() }
            let stop = closed
            condition.unlock()
            if stop { return }
            let count = stream.read(&chunk, maxLength: chunk.count)  // may block: this is why we are here
            condition.lock()
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                finished = true
            } else {
                failed = true
            }
            let wake = waiting
            waiting = false
            condition.unlock()
            if wake { onReadable() }
            if count <= 0 { return }
        }
    }

    /// Awaits `chunks` into the buffer until the end, a failure, or ``close()``; waits for room
    /// while the buffer is full.
    private func pull(_ chunks: BodyChunks, onReadable: @Sendable () -> Void) async {
        while true {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready: Bool = condition.withLock {
                    guard buffer.count >= capacity, !closed else { return true }
                    roomWaiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
            if condition.withLock({ closed }) { return }
            let outcome: Data??
            do {
                outcome = .some(try await chunks.next())
            } catch {
                outcome = nil
            }
            let wake: Bool = condition.withLock {
                switch outcome {
                case .some(.some(let chunk)): buffer.append(contentsOf: chunk)
                case .some(.none): finished = true
                case .none: failed = true
                }
                defer { waiting = false }
                return waiting
            }
            if wake { onReadable() }
            guard case .some(.some) = outcome else { return }
        }
    }

    /// The task's wait for room, taken (under `condition`) to be resumed; `nil` if it does not wait.
    private func takeRoomWaiter() -> CheckedContinuation<Void, Never>? {
        defer { roomWaiter = nil }
        return roomWaiter
    }

    /// Moves buffered bytes into `destination` (under the engine's lock).
    func take(into destination: UnsafeMutableRawBufferPointer) -> CurlUpload.ReadResult {
        condition.lock()
        defer { condition.unlock() }
        if !buffer.isEmpty {
            let count = buffer.take(into: destination)
            condition.signal()
            if buffer.count < capacity { takeRoomWaiter()?.resume() }  // only enqueues the task
            return .bytes(count)
        }
        if failed { return .failed }
        if finished { return .bytes(0) }
        waiting = true
        return .wouldBlock
    }

    /// Bytes read ahead and not yet taken, and whether the stream ended (`finished`) or failed.
    /// With `waitIfUndecided`, a caller that cannot go on until more is known (the end or more
    /// bytes) is woken by `onReadable` when the pump learns it.
    func state(waitIfUndecided: Bool) -> (buffered: Int, finished: Bool, failed: Bool) {
        condition.lock()
        defer { condition.unlock() }
        if waitIfUndecided, !finished, !failed { waiting = true }
        return (buffer.count, finished, failed)
    }

    /// Stops reading (the transfer ended). A read blocked in one of Courier's body streams (a
    /// producer that waits) is ended at once, so the producer stops with the call; another
    /// stream's read ends when it returns.
    func close() {
        condition.lock()
        closed = true
        let interruption = self.interruption
        let task = self.task
        let waiter = takeRoomWaiter()
        condition.signal()
        condition.unlock()
        waiter?.resume()
        task?.cancel()
        interruption?.interrupt()
    }
}

/// The bytes a ``CurlUploadPump`` read ahead and libcurl has not taken yet: an array and the index
/// of its first untaken byte. Its storage stays within twice what is pending: the taken prefix is
/// dropped once it is half of it. (A `Data` with `removeFirst` only moved the start of a slice over
/// storage that kept every byte ever appended: a 1 GiB upload held 1 GiB.)
private struct PendingBytes {
    private var storage: [UInt8] = []
    private var head = 0

    /// Bytes not yet taken.
    var count: Int { storage.count - head }
    var isEmpty: Bool { head == storage.count }

    mutating func append<Bytes: Collection>(contentsOf bytes: Bytes) where Bytes.Element == UInt8 {
        if head > 0, head >= storage.count / 2 {
            storage.removeFirst(head)
            head = 0
        }
        storage.append(contentsOf: bytes)
    }

    /// Moves up to `destination.count` bytes into it; returns how many.
    mutating func take(into destination: UnsafeMutableRawBufferPointer) -> Int {
        let count = min(destination.count, self.count)
        let start = head
        storage.withUnsafeBytes { source in
            destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[start..<(start + count)]))
        }
        head += count
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        }
        return count
    }
}

/// Carries an `InputStream` (not `Sendable`) to the one thread that will use it.
private struct UncheckedStream: @unchecked Sendable {
    let stream: InputStream
    init(_ stream: InputStream) { self.stream = stream }
}
#endif
