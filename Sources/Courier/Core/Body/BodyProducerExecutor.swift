import Foundation

/// One dedicated thread that runs the tasks pulling chunks from an ``MessageBody`` for an upload
/// (task executors need iOS 18/macOS 15 on Apple platforms).
///
/// URLSession on Linux reads a request body stream synchronously on the work queue it shares
/// between sessions, and the same queue serves `resume()`, `taskIdentifier` and other calls made
/// from Swift's cooperative threads. A chunk producer on the cooperative pool could then wait for
/// a thread held by a caller that waits for the queue the reader is blocking — measured: every
/// transfer of the process stalled until the chunk timeout. This thread is never part of that
/// cycle.
///
/// `@unchecked Sendable`: `jobs` is only touched with `condition` locked.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
final class BodyProducerExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = BodyProducerExecutor()

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    private init() {
        let thread = Thread { [self] in run() }
        thread.name = "Courier request body producer"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
