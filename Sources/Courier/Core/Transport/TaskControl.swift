import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a session's tasks are made, started and cancelled: dispatch queues, never a thread of
/// Swift's cooperative pool or the session's delegate queue.
///
/// FoundationNetworking (Linux) does `dataTask(with:)`, `resume()` and `cancel()` as a `sync` on
/// the session's internal work queue, and that queue can be busy for seconds while libcurl
/// delivers a fast body: called from the pool, each such call blocked a pool thread, and on a
/// 2-core machine (a pool of two threads) the whole process stood still (measured: 45 s with no
/// test progress, thread dumps showing both pool threads in `URLSessionTask.resume` and
/// `URLSession.dataTask(with:)`, the delegate queue in `URLSessionTask.cancel`). On Apple
/// platforms these calls return at once; the hop costs a few microseconds there.
enum TaskControl {
    /// Makes a data task for `request` on a serial queue of its own.
    ///
    /// Never on `DispatchQueue.global()`: on Linux its threads are the cooperative pool's (one per
    /// core), so a blocked call there stalls the pool just the same (measured: closes 7–8 s late).
    /// A serial queue of its own targets libdispatch's overcommitting root queue, which adds a
    /// thread when its threads are blocked.
    /// The task's identifier is read there too: on Linux `taskIdentifier` is another call that
    /// waits for the session's work queue.
    static func dataTask(in session: URLSession, with request: URLRequest) async -> SessionTask {
        await withCheckedContinuation { (continuation: CheckedContinuation<SessionTask, Never>) in
            DispatchQueue(label: "courier.urlsession.make-task").async {
                let task = session.dataTask(with: request)
                continuation.resume(returning: SessionTask(task: task, taskIdentifier: task.taskIdentifier))
            }
        }
    }

    /// The commands of one task, run in the order given on a serial queue of that task's own (so
    /// a cancel waiting for a busy session never holds up another task's start).
    final class Commands: Sendable {
        private let task: any TransportTask
        private let queue = DispatchQueue(label: "courier.urlsession.task")  // overcommitting, see above

        init(_ task: any TransportTask) {
            self.task = task
        }

        /// Starts (or resumes) the task.
        func resume() {
            queue.async { [task] in task.resume() }
        }

        /// Cancels the task.
        func cancel() {
            queue.async { [task] in task.cancel() }
        }
    }
}

/// What the session delegate does to a running task: a `URLSessionTask` (``SessionTask``), or a
/// test's stand-in (so the delegate's platform-dependent branches run on Linux without a network).
protocol TransportTask: Sendable {
    /// The task's identifier, unique within its session: the key of the delegate's registry.
    var taskIdentifier: Int { get }
    /// Starts or continues the task.
    func resume()
    /// Pauses the task (back-pressure, when ``TransportCapabilities/canSuspendTasks``).
    func suspend()
    /// Cancels the task.
    func cancel()
}

/// A `URLSessionTask` and its identifier, read once where the task was made.
struct SessionTask: TransportTask {
    let task: URLSessionTask
    let taskIdentifier: Int

    func resume() { task.resume() }
    func suspend() { task.suspend() }
    func cancel() { task.cancel() }
}
