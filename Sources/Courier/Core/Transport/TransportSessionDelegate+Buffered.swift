import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One running buffered call: where its response goes and what arrived so far.
struct BufferedCall: Sendable {
    let continuation: CheckedContinuation<HTTPResponse, any Error>
    /// Where the request body's bytes are reported (an upload's progress), if anywhere.
    let progress: TransferProgressReporter?
    /// The most body bytes held (``TransportReporter/maximumBodySize``); `nil` for no limit.
    let limit: Int?
    var body = Data()
}

extension TransportSessionDelegate {
    /// Runs `task` and returns its complete response; cancelling the calling task cancels it.
    ///
    /// - Parameter pinning: The pins the task's server-trust challenges must pass, if any.
    func run(_ task: any TransportTask, pinning: PinningPolicy? = nil) async throws -> HTTPResponse {
        let id = task.taskIdentifier
        let progress = TransferProgressReporter.current
        let limit = TransportReporter.current?.maximumBodySize
        let control = TaskControl.Commands(task)
        register(id, pinning: pinning)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                calls.withLock { $0[id] = BufferedCall(continuation: continuation, progress: progress, limit: limit) }
                startUnlessCancelled(id, control)
            }
        } onCancel: {
            control.cancel()
        }
    }

    /// Makes a data task for `request` in `session` and runs it like ``run(_:pinning:)``, in one
    /// hop: the task is made, registered and started on a serial queue of its own (never a thread
    /// of the cooperative pool, see ``TaskControl``), and a cancel goes to that same queue, so it
    /// always comes after the start. (Making the task first and starting it later cost a second
    /// hop and a second queue per request: measured, about a third of Courier's extra CPU over
    /// raw URLSession on Linux.)
    func run(_ request: URLRequest, in session: URLSession, pinning: PinningPolicy? = nil) async throws -> HTTPResponse {
        // Task-locals are read here, in the calling task, not on the queue.
        let progress = TransferProgressReporter.current
        let reporters = TaskReporters.current(capabilities)
        let limit = TransportReporter.current?.maximumBodySize
        let queue = DispatchQueue(label: "courier.urlsession.task")
        // Only touched on `queue`: the task once made, and whether a cancel came first.
        let state = Locked<(task: SessionTask?, cancelled: Bool)>((nil, false))
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<HTTPResponse, any Error>) in
                TaskControl.submit(on: queue) { [self] in
                    let made = session.dataTask(with: request)
                    let task = SessionTask(task: made, taskIdentifier: made.taskIdentifier)
                    let id = task.taskIdentifier
                    register(id, pinning: pinning, reporters: reporters)
                    calls.withLock { $0[id] = BufferedCall(continuation: continuation, progress: progress, limit: limit) }
                    let cancelled = state.withLock { state in
                        state.task = task
                        return state.cancelled
                    }
                    // Cancelled before it started: never start it.
                    if cancelled {
                        complete(id, error: URLError(.cancelled), response: nil)
                    } else {
                        task.resume()
                    }
                }
            }
        } onCancel: {
            TaskControl.submit(on: queue) {
                let task = state.withLock { state in
                    state.cancelled = true
                    return state.task
                }
                task?.cancel()
            }
        }
    }

    /// Passes received bytes to the task's streamed call or appends them to its buffered body.
    /// A buffered body that would grow past its call's limit ends the call at once with
    /// ``NetworkError/responseTooLarge(limit:)`` and `cancel`s the task: the rest is never held.
    func receive(_ id: Int, _ data: Data, cancel: () -> Void = {}) {
        if receiveStreamed(id, data) { return }
        let refused: BufferedCall? = calls.withLock { calls in
            guard let count = calls[id]?.body.count else { return nil }
            if let limit = calls[id]?.limit, data.count > limit - count { return calls.removeValue(forKey: id) }
            calls[id]?.body.append(data)
            return nil
        }
        guard let refused, let limit = refused.limit else { return }
        cancel()
        refused.continuation.resume(throwing: NetworkError.responseTooLarge(limit: limit))
    }

    /// Resumes the buffered call of `id` (if it still waits) with `result` applied to its body.
    func finish(_ id: Int, with result: (Data) -> Result<HTTPResponse, any Error>) {
        guard let call = calls.withLock({ $0.removeValue(forKey: id) }) else { return }
        call.continuation.resume(with: result(call.body))
    }
}
