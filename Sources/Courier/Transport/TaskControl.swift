import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where a session's tasks are made, started and cancelled: a serial dispatch queue of the
/// session's own, never a thread of Swift's cooperative pool or the session's delegate queue.
///
/// FoundationNetworking (Linux) does `dataTask(with:)`, `resume()` and `cancel()` as a `sync` on
/// the session's internal work queue, and that queue can be busy for seconds while libcurl
/// delivers a fast body: called from the pool, each such call blocked a pool thread, and on a
/// 2-core machine (a pool of two threads) the whole process stood still (measured: 45 s with no
/// test progress, thread dumps showing both pool threads in `URLSessionTask.resume` and
/// `URLSession.dataTask(with:)`, the delegate queue in `URLSessionTask.cancel`). On Apple
/// platforms these calls return at once; the hop costs a few microseconds there.
final class TaskControl: Sendable {
    private let queue = DispatchQueue(label: "courier.urlsession.task-control")

    /// Makes a data task for `request` on the control queue.
    func dataTask(in session: URLSession, with request: URLRequest) async -> URLSessionDataTask {
        await withCheckedContinuation { (continuation: CheckedContinuation<URLSessionDataTask, Never>) in
            queue.async { continuation.resume(returning: session.dataTask(with: request)) }
        }
    }

    /// Starts (or resumes) `task`, in order with the other commands of this control.
    func resume(_ task: URLSessionTask) {
        queue.async { task.resume() }
    }

    /// Cancels `task`, in order with the other commands of this control.
    func cancel(_ task: URLSessionTask) {
        queue.async { task.cancel() }
    }
}
