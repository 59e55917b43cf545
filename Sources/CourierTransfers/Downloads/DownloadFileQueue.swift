import Courier
import Foundation

/// Where a download's file work runs: a serial dispatch queue of its own, off Swift's cooperative
/// pool. `FileHandle` writes, `fsync(2)` of a whole file and the SHA-256 read-back block their
/// thread (for seconds on a slow disk); on the pool, which has as many threads as cores (two on a
/// small device or CI machine), that would stall every other task of the app.
///
/// The body is read off the pool too (``reading(_:)``), so the reader that drains a transfer held
/// by a full buffer never waits for a pool thread: on Linux the held transfer is URLSession's work
/// queue, which every session shares, and a pool whose threads all wait in URLSession calls for
/// that queue could not run a reader on the pool (see `StreamingOptions.drainsContinuously`).
struct DownloadFileQueue: Sendable {
    private let queue = DispatchQueue(label: "courier.download.file")

    /// Runs `work` on the queue and returns what it returned or throws what it threw. The caller's
    /// cancellation does not interrupt `work` (a write is never cut short).
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Runs `work`, which cannot fail, on the queue.
    func run(_ work: @escaping @Sendable () -> Void) async {
        await withCheckedContinuation { continuation in
            queue.async {
                work()
                continuation.resume()
            }
        }
    }

    /// Runs `body` with `DedicatedThreadExecutor.downloadReaders` as the task's executor
    /// preference: its nonisolated code and the actors it calls without an executor of their own
    /// run on that thread, not on the pool (task executors need iOS 18, macOS 15, tvOS 18,
    /// watchOS 11; before them `body` runs where the caller does — those platforms pause a transfer
    /// instead of holding it).
    func reading<T>(_ body: () async -> T) async -> T {
        if #available(macOS 15, iOS 18, tvOS 18, watchOS 11, *) {
            return await withTaskExecutorPreference(DedicatedThreadExecutor.downloadReaders) { await body() }
        }
        return await body()
    }
}
