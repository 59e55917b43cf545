import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One streamed call of ``URLSessionTransport``: where its head goes and the buffer its body
/// bytes go to.
struct StreamingCall: Sendable {
    /// The task, suspended and resumed for back-pressure.
    let task: any TransportTask
    /// Resumed once, with the head or the failure before it.
    var head: CheckedContinuation<HTTPResponse, any Error>?
    let buffer: StreamBuffer
    let progress: TransferProgressReporter?
    /// Where a task that cannot pause waits while its buffer is full (a consumer that drains
    /// continuously, on a ``BoundedDelegateQueue``); `nil` when the task pauses or overflows.
    let hold: DeliveryHold?
    /// With a hold: the most bytes the buffer may grow to while a hold is given up
    /// (``StreamingOptions/bufferLimit``); past it the body fails with an overflow.
    let hardLimit: Int
    var received: Int64 = 0
    var expected: Int64?
}

extension TransportSessionDelegate {
    /// Runs `task` as a streamed call: returns once the head arrived, with the body delivered
    /// through a ``StreamBuffer`` of `options.bufferLimit` bytes. When the platform can pause a
    /// task (``TransportCapabilities/canSuspendTasks``) a full buffer suspends it (a suspended data
    /// task sends and times out nothing) and a drained one resumes it. Where a resumed task
    /// re-sends its request, a full buffer fails the body instead — unless the consumer drains
    /// continuously (``StreamingOptions/drainsContinuously``) and the delegate queue is a
    /// ``BoundedDelegateQueue`` (``TransportCapabilities/boundsDelegateQueue``): then the delegate
    /// waits on its queue until the consumer took a chunk, which holds the transfer.
    ///
    /// - Parameter pinning: The pins the task's server-trust challenges must pass, if any.
    func stream(
        _ task: any TransportTask, options: StreamingOptions, pinning: PinningPolicy? = nil
    ) async throws -> HTTPResponse {
        let id = task.taskIdentifier
        let control = TaskControl.Commands(task)
        let hold =
            !capabilities.canSuspendTasks && capabilities.boundsDelegateQueue && options.drainsContinuously
            ? DeliveryHold(budgetPerSecond: holdBudgetPerSecond) : nil
        // On overflow (a task that cannot pause) this runs on the delegate queue: the cancel must not wait there.
        let pauses = capabilities.canSuspendTasks || hold != nil
        // A consumer's sink (a download writing its file) runs on the delegate queue: serial, never
        // the cooperative pool. Chunks that wait are compacted (URLSession's keep far more memory).
        let buffer = StreamBuffer(
            limit: options.bufferLimit(pausing: pauses), pausesProducer: pauses, deliversToSinks: true, compactsChunks: true,
            keepsBufferedOnOverflow: options.deliversBufferedBeforeOverflow
        ) {
            hold?.release()  // a consumer gone away first never leaves the delegate waiting
            control.cancel()
        }
        if capabilities.canSuspendTasks {
            // Direct, in step with the `suspend()` in `receiveStreamed` (Apple's calls do not block).
            buffer.setOnResume { task.resume() }
        } else if let hold {
            // Drained to half the bound: a hold given up holds again from here.
            buffer.setOnResume { hold.release(resumingHolds: true) }
        }
        let progress = TransferProgressReporter.current
        register(id, pinning: pinning)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                streams.withLock {
                    $0[id] = StreamingCall(
                        task: task, head: continuation, buffer: buffer, progress: progress, hold: hold,
                        hardLimit: max(options.bufferLimit, buffer.limit))
                }
                startUnlessCancelled(id, control)
            }
        } onCancel: {
            // Cancels only while waiting for the head; afterwards the body's consumer owns the task.
            if streams.withLock({ $0[id]?.head != nil }) { control.cancel() }
        }
    }

    /// Hands the head to the waiting caller, with the body streaming from the call's buffer.
    func deliverHead(_ id: Int, _ http: HTTPURLResponse) {
        let delivery: (CheckedContinuation<HTTPResponse, any Error>, StreamBuffer)? = streams.withLock { streams in
            guard var call = streams[id], let head = call.head else { return nil }
            call.head = nil
            call.expected = Self.expectedLength(http)
            streams[id] = call
            return (head, call.buffer)
        }
        guard let (continuation, buffer) = delivery else { return }
        var response = HTTPResponse(http, body: Data())
        response.body = MessageBody(buffer: buffer, length: Self.expectedLength(http).map { .known($0) } ?? .unknown)
        continuation.resume(returning: response)
    }

    /// Passes received bytes on; `false` when the task is not a streamed call.
    func receiveStreamed(_ id: Int, _ data: Data) -> Bool {
        guard
            let (call, received) = streams.withLock({ streams -> (StreamingCall, Int64)? in
                guard var call = streams[id] else { return nil }
                call.received += Int64(data.count)
                streams[id] = call
                return (call, call.received)
            })
        else { return false }
        let demand = call.buffer.append(data)
        call.progress?.didReceive(received, of: call.expected)
        // Without a hold, a task that cannot pause got `.pause` only as the overflow that already
        // failed the body and cancelled the task.
        if demand == .pause, capabilities.canSuspendTasks {
            call.task.suspend()
            // The consumer may have drained the buffer (and resumed the not yet suspended task)
            // between `append` and `suspend`: then resume here, or the task would stay suspended.
            if !call.buffer.isPaused { call.task.resume() }
        } else if demand == .pause, let hold = call.hold {
            // On the bounded delegate queue's own thread: the chunks behind this one wait in the
            // queue, and at its bound so does the socket's reader (every URLSession of the process).
            // Until the consumer took a chunk (not half the buffer, as a suspended task waits:
            // holding again costs nothing), so each hold lasts about one chunk's write.
            let buffer = call.buffer
            // A consumer that did not take a chunk within a hold, or whose holds used up the
            // second's budget (a machine starved of CPU, a reader slower than the network), must
            // not hold every session again: holds stop until it drained the buffer to half, and the
            // buffer absorbs the lag up to the hard bound (a download continues from the bytes
            // written).
            if !hold.isGivenUp,
                !hold.wait(atMost: maxHold, while: { buffer.bufferedByteCount >= buffer.limit && !buffer.activity.finished })
            {
                hold.giveUp()
            }
            if hold.isGivenUp, buffer.bufferedByteCount >= call.hardLimit {
                buffer.abort(with: .streamBufferOverflow(limit: call.hardLimit))
            }
        }
        return true
    }

    /// Ends a streamed call: the head's waiter gets the failure, or the body ends (with it).
    /// `false` when the task is not a streamed call.
    @discardableResult
    func completeStreamed(_ id: Int, error: (any Error)?, response: URLResponse?) -> Bool {
        guard let call = streams.withLock({ $0.removeValue(forKey: id) }) else { return false }
        if let head = call.head {
            if let error {
                head.resume(throwing: error)
                return true
            }
            guard let http = response as? HTTPURLResponse else {
                head.resume(throwing: URLError(.badServerResponse))
                return true
            }
            var headResponse = HTTPResponse(http, body: Data())
            headResponse.body = MessageBody(
                buffer: call.buffer, length: Self.expectedLength(http).map { .known($0) } ?? .unknown)
            head.resume(returning: headResponse)
        }
        call.buffer.finish(throwing: error)
        return true
    }

    /// The body length to expect: `Content-Length` of an identity-encoded body only (URLSession
    /// decodes gzip/br and keeps the compressed length), never a guess.
    static func expectedLength(_ http: HTTPURLResponse) -> Int64? {
        if let coding = http.value(forHTTPHeaderField: "Content-Encoding")?.trimmingCharacters(in: .whitespaces),
            !coding.isEmpty, coding.lowercased() != "identity"
        {
            return nil
        }
        guard let value = http.value(forHTTPHeaderField: "Content-Length"), let length = Int64(value), length >= 0 else {
            return nil
        }
        return length
    }
}

/// Where the delegate of a transfer that cannot pause waits while the consumer drains a full buffer
/// (see ``StreamingOptions/drainsContinuously``): on the thread of a ``BoundedDelegateQueue``,
/// never on the cooperative pool.
final class DeliveryHold: Sendable {
    /// The longest one hold lasts by default, in seconds. A consumer writing to disk takes a chunk
    /// in well under a millisecond; one that has not after 100 ms may be unable to run at all
    /// (measured: holds of up to 2 s, with test code calling URLSession from the cooperative pool,
    /// starved the pool and stalled every session of the process for seconds).
    static let defaultMaxHold: TimeInterval = 0.1
    /// The most time holds may add up to within one second, in seconds: a consumer that takes a
    /// chunk every few milliseconds but stays slower than the network never lets a single hold time
    /// out, and back-to-back holds would stall every session of the process for the whole transfer
    /// (measured: a plain GET to another server waited 24.7 s behind a download read at 8 MiB/s).
    /// Past it the hold is given up, as after a hold that timed out.
    static let holdBudgetPerSecond: TimeInterval = 0.2
    private let condition = NSCondition()
    private let givenUp = Locked(false)
    /// When the current one-second window began and how long holds lasted in it.
    private let spent = Locked((windowStart: Date.distantPast, held: TimeInterval(0)))
    /// The most time holds may add up to within one second, in seconds.
    let budgetPerSecond: TimeInterval

    /// A hold whose holds add up to at most `budgetPerSecond` seconds within a second.
    init(budgetPerSecond: TimeInterval = DeliveryHold.holdBudgetPerSecond) {
        self.budgetPerSecond = budgetPerSecond
    }

    /// Whether a hold timed out and no hold is made until the consumer drained the buffer to half
    /// (``release(resumingHolds:)``).
    var isGivenUp: Bool { givenUp.withLock { $0 } }

    /// Stops holding until the next ``release(resumingHolds:)`` with `true`.
    func giveUp() { givenUp.withLock { $0 = true } }

    /// Blocks the calling thread while `isHeld` is true, for at most `limit` seconds and at most
    /// what is left of ``holdBudgetPerSecond`` in the current second: looks again
    /// on every ``release(resumingHolds:)`` and every millisecond (a consumer taking one chunk
    /// signals nothing).
    ///
    /// - Returns: `false` when the hold was still on after `limit`.
    func wait(atMost limit: TimeInterval, while isHeld: () -> Bool) -> Bool {
        let start = Date()
        let budgetLeft: TimeInterval = spent.withLock { spent in
            if start.timeIntervalSince(spent.windowStart) >= 1 { spent = (start, 0) }
            return budgetPerSecond - spent.held
        }
        let deadline = start.addingTimeInterval(min(limit, max(0, budgetLeft)))
        defer {
            let held = Date().timeIntervalSince(start)
            spent.withLock { $0.held += held }
        }
        condition.lock()
        defer { condition.unlock() }
        while isHeld() {
            guard Date() < deadline else { return false }
            _ = condition.wait(until: min(deadline, Date(timeIntervalSinceNow: 0.001)))
        }
        return true
    }

    /// Wakes the waiting delegate: the buffer was drained to half (`resumingHolds`: a hold given
    /// up holds again), or the body ended.
    func release(resumingHolds: Bool = false) {
        if resumingHolds { givenUp.withLock { $0 = false } }
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }
}
