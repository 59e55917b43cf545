import Foundation

/// A task executor with one thread of its own, for tasks that a thread held by URLSession may wait
/// for (task executors need iOS 18, macOS 15, tvOS 18, watchOS 11 on Apple platforms).
///
/// URLSession on Linux runs every session's work on one queue: it reads a request body stream
/// synchronously there, and Courier's bounded delegate queue holds it while a download's reader
/// catches up; the same queue serves `resume()`, `taskIdentifier` and other calls made from Swift's
/// cooperative threads. A task on the cooperative pool that such a queue waits for could itself
/// wait for a pool thread held by a caller that waits for the queue — measured: every transfer of
/// the process stalled until the chunk timeout. A thread of this executor is never part of that
/// cycle. One thread, not a dispatch queue: a queue's blocks run on whichever worker thread is
/// free, and each thread that allocates gets a malloc arena of its own that keeps its high-water
/// mark (measured: a download read on a serial dispatch queue peaked 10 MiB higher).
///
/// `@unchecked Sendable`: `jobs` is only touched with `condition` locked.
@available(macOS 15, iOS 18, tvOS 18, watchOS 11, *)
package final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    /// Runs the tasks pulling chunks from a ``MessageBody`` for an upload.
    package static let bodyProducers = DedicatedThreadExecutor(name: "Courier request body producer")
    /// Runs the tasks reading a download's body into its file (`CourierTransfers`).
    package static let downloadReaders = DedicatedThreadExecutor(name: "Courier download reader")

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []

    /// Starts the thread, named `name` (shown by debuggers and `ps -L`).
    private init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Queues `job`; the thread runs jobs one at a time, in order.
    package func enqueue(_ job: consuming ExecutorJob) {
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

extension Task where Success == Void, Failure == Never {
    /// Starts `work`, a task that pulls a request body's chunks, on the thread of
    /// ``DedicatedThreadExecutor/bodyProducers`` — where task executors exist — so that it never
    /// waits for a cooperative thread held by a caller that waits for URLSession's queue; on
    /// Swift's pool on the Apple platforms before them.
    package static func bodyProducer(_ work: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {
            return Task(executorPreference: DedicatedThreadExecutor.bodyProducers) { await work() }
        } else {
            return Task { await work() }
        }
    }
}
