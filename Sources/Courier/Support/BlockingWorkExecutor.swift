import Dispatch

/// Runs an actor's jobs on a serial dispatch queue of its own, off Swift's cooperative pool, for
/// actors whose work blocks its thread: file I/O (a write can wait hundreds of milliseconds for a
/// busy disk), SQLite (an fsync per commit, a busy timeout while another process holds the
/// database). A blocked pool thread stalls every task of the app: the pool has as many threads as
/// cores, two on a small phone or CI machine.
///
/// ```swift
/// actor Store {
///     private nonisolated let executor = BlockingWorkExecutor(label: "app.store")
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
/// }
/// ```
package final class BlockingWorkExecutor: SerialExecutor {
    private let queue: DispatchQueue

    /// An executor on a new serial queue named `label`.
    package init(label: String) {
        queue = DispatchQueue(label: label)
    }

    package func enqueue(_ job: UnownedJob) {
        let executor = asUnownedSerialExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }

    package func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
