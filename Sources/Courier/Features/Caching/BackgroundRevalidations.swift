import Foundation

/// The `stale-while-revalidate` revalidations running in the background: at most one per stored
/// variant (RFC 5861 §3), each bounded by a timeout, cancellable per partition, and awaitable.
///
/// Tasks are unstructured (they must outlive the call that served the stale response) and
/// tracked here, so they never run unobserved: ``HTTPCache`` cancels them when it goes away or
/// when their partition is cleared.
final class BackgroundRevalidations: Sendable {
    private struct Running: Sendable {
        let token: UInt64
        let partition: String
        let task: Task<Void, Never>
    }

    private struct State: Sendable {
        var running: [String: Running] = [:]
        var nextToken: UInt64 = 0
        var started = 0
    }

    private let state = Locked(State())

    /// Number of revalidations running now.
    var count: Int { state.withLock { $0.running.count } }

    /// Number of revalidations started since creation (for tests and metrics).
    var startedCount: Int { state.withLock { $0.started } }

    /// Starts `work` for `id` unless one is already running for it.
    ///
    /// - Parameters:
    ///   - id: Identifies the stored variant being revalidated.
    ///   - partition: The variant's partition, for ``cancel(partition:)``.
    ///   - timeout: `work` is cancelled after this long.
    ///   - work: The revalidation; it must check for cancellation before storing.
    /// - Returns: `true` when a new revalidation started.
    @discardableResult
    func start(
        id: String, partition: String, timeout: Duration,
        _ work: @escaping @Sendable () async -> Void
    ) -> Bool {
        // The task is created while the lock is held, so its own removal (which takes the lock)
        // always happens after it was registered.
        state.withLock { state in
            guard state.running[id] == nil else { return false }
            state.nextToken &+= 1
            state.started += 1
            let token = state.nextToken
            let task = Task.detached { [weak self] in
                await Self.run(work, timeout: timeout)
                self?.finish(id: id, token: token)
            }
            state.running[id] = Running(token: token, partition: partition, task: task)
            return true
        }
    }

    /// Cancels the revalidations of `partition` and waits until they have ended.
    func cancel(partition: String) async {
        let tasks = state.withLock { state in
            state.running.values.filter { $0.partition == partition }.map(\.task)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    /// Cancels every revalidation without waiting.
    func cancelAll() {
        let tasks = state.withLock { $0.running.values.map(\.task) }
        for task in tasks { task.cancel() }
    }

    /// Cancels every revalidation and waits until they have ended.
    func cancelAllAndWait() async {
        let tasks = state.withLock { $0.running.values.map(\.task) }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    /// Waits until no revalidation is running (bounded: revalidations do not start others, so
    /// a few rounds always suffice; each task is itself bounded by its timeout).
    func waitForAll() async {
        for _ in 0..<16 {
            let tasks = state.withLock { $0.running.values.map(\.task) }
            if tasks.isEmpty { return }
            for task in tasks { await task.value }
        }
    }

    private func finish(id: String, token: UInt64) {
        state.withLock { state in
            if state.running[id]?.token == token { state.running[id] = nil }
        }
    }

    /// Runs `work`, cancelling it when `timeout` passes first.
    private static func run(_ work: @escaping @Sendable () async -> Void, timeout: Duration) async {
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await work() }
            group.addTask { try? await Task.sleep(for: timeout) }
            await group.next()
            group.cancelAll()
        }
    }
}
