import Foundation

/// Where a download's file work runs: a serial dispatch queue of its own, off Swift's cooperative
/// pool. `FileHandle` writes, `fsync(2)` of a whole file and the SHA-256 read-back block their
/// thread (for seconds on a slow disk); on the pool, which has as many threads as cores (two on a
/// small device or CI machine), that would stall every other task of the app. The download's body
/// is read on the pool and written here a batch at a time (``Downloader/writeBatchBytes``).
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
}
