import Dispatch

/// Runs a ``MutationQueue``'s jobs on a serial dispatch queue of its own, off Swift's
/// cooperative pool: the queue's SQLite calls block their thread (an fsync per enqueue, up to 5 s
/// of busy timeout when another process holds the database), and a blocked pool thread would
/// stall every task of the app (the pool has as many threads as cores).
final class QueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: UnownedJob) {
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
