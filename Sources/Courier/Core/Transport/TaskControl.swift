import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a session's tasks are made, started and cancelled: serial dispatch queues, one per task,
/// never a thread of Swift's cooperative pool or the session's delegate queue.
///
/// FoundationNetworking (Linux) does `dataTask(with:)`, `resume()` and `cancel()` as a `sync` on
/// the session's internal work queue, and that queue can be busy for seconds while libcurl
/// delivers a fast body: called from the pool, each such call blocked a pool thread, and on a
/// 2-core machine (a pool of two threads) the whole process stood still (measured: 45 s with no
/// test progress, thread dumps showing both pool threads in `URLSessionTask.resume` and
/// `URLSession.dataTask(with:)`, the delegate queue in `URLSessionTask.cancel`). On Apple
/// platforms these calls return at once; the hop costs a few microseconds there.
///
/// A queue per task, so one task's command stuck behind a busy work queue never holds up another
/// task's (one queue for all made a deadline's cancel wait more than a second behind other
/// tasks' starts). But each command that waits holds one of libdispatch's overcommit threads,
/// which are capped (255 on Linux): measured, 256 calls started at once took every one, none was
/// left to drain the work queue, and the process hung with no deadline able to fire (240 calls
/// ended in 0.28 s). So at most ``maxRunning`` commands run at once; the rest wait in a list,
/// first in first out (holding no thread), and each command that ends starts the next.
enum TaskControl {
    /// The most task commands of the process running (or waiting for a work queue) at once: half
    /// of libdispatch's overcommit threads, the rest left to the work queue itself, the delegate
    /// queues and the app. (The parallel test suite had up to 156 commands waiting at once; with
    /// 32, a deadline's cancel waited behind them for more than a second.)
    static let maxRunning = 128

    /// Commands running, and those waiting for a slot in the order given.
    private struct Gate: Sendable {
        var running = 0
        var waiting: [(queue: DispatchQueue, work: @Sendable () -> Void)] = []
        var next = 0
    }

    private static let gate = Locked(Gate())

    /// Runs `work` on `queue` (a serial queue of one task's), as soon as fewer than
    /// ``maxRunning`` commands run. Commands given in an order run in that order.
    static func submit(on queue: DispatchQueue, _ work: @escaping @Sendable () -> Void) {
        let startsNow = gate.withLock { gate in
            // A free slot means nothing waits (an ending command hands its slot to the next).
            guard gate.running < maxRunning else {
                gate.waiting.append((queue, work))
                return false
            }
            gate.running += 1
            return true
        }
        if startsNow { run(work, on: queue) }
    }

    private static func run(_ work: @escaping @Sendable () -> Void, on queue: DispatchQueue) {
        queue.async {
            work()
            let next = gate.withLock { gate -> (queue: DispatchQueue, work: @Sendable () -> Void)? in
                guard gate.next < gate.waiting.count else {
                    gate.running -= 1
                    return nil
                }
                let next = gate.waiting[gate.next]
                gate.next += 1
                if gate.next == gate.waiting.count {
                    gate.waiting.removeAll(keepingCapacity: true)
                    gate.next = 0
                }
                return next
            }
            if let next { run(next.work, on: next.queue) }
        }
    }

    /// Makes a data task for `request` on a serial queue of its own. The task's identifier is read
    /// there too: on Linux `taskIdentifier` is another call that waits for the session's work
    /// queue. Never on `DispatchQueue.global()`: on Linux its threads are the cooperative pool's
    /// (one per core), so a blocked call there stalls the pool just the same. A serial queue of its
    /// own targets libdispatch's overcommitting root queue, which adds a thread when its threads
    /// are blocked.
    static func dataTask(in session: URLSession, with request: URLRequest) async -> SessionTask {
        await withCheckedContinuation { (continuation: CheckedContinuation<SessionTask, Never>) in
            submit(on: DispatchQueue(label: "courier.urlsession.make-task")) {
                let task = session.dataTask(with: request)
                continuation.resume(returning: SessionTask(task: task, taskIdentifier: task.taskIdentifier))
            }
        }
    }

    /// The commands of one task, run in the order given on a serial queue of that task's own.
    final class Commands: Sendable {
        private let task: any TransportTask
        private let queue = DispatchQueue(label: "courier.urlsession.task")  // overcommitting, see above

        init(_ task: any TransportTask) {
            self.task = task
        }

        /// Starts (or resumes) the task.
        func resume() {
            TaskControl.submit(on: queue) { [task] in task.resume() }
        }

        /// Cancels the task.
        func cancel() {
            TaskControl.submit(on: queue) { [task] in task.cancel() }
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
