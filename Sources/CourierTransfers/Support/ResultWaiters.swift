import Courier
import Foundation

/// The tasks awaiting each transfer's result (``UploadManager/result(for:)``,
/// ``BackgroundDownloads/result(for:)``), each under a token of its own: a cancelled task's wait
/// ends alone, with `NetworkError.cancelled`, while the transfer and the other waits go on.
protocol ResultWaiting: Actor {
    associatedtype Outcome: Sendable
    /// The waits of each transfer, by its id.
    var waiters: [UUID: [ResultWait<Outcome>]] { get set }
}

/// One task's wait for a transfer's result.
struct ResultWait<Outcome: Sendable> {
    let token: UUID
    let continuation: CheckedContinuation<Outcome, any Error>
}

extension ResultWaiting {
    /// Waits for the transfer `id` to be settled by ``settleWaits(of:with:)``; throws
    /// `NetworkError.cancelled` at once when the calling task is cancelled.
    func awaitResult(of id: UUID) async throws -> Outcome {
        let token = UUID()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                guard !Task.isCancelled else { return continuation.resume(throwing: NetworkError.cancelled) }
                waiters[id, default: []].append(ResultWait(token: token, continuation: continuation))
            }
        } onCancel: {
            Task { await self.stopWaiting(token, for: id) }
        }
    }

    /// Ends every wait for the transfer `id` with `result`.
    func settleWaits(of id: UUID, with result: Result<Outcome, any Error>) {
        for wait in waiters.removeValue(forKey: id) ?? [] { wait.continuation.resume(with: result) }
    }

    /// Ends the wait `token` of a cancelled task for the transfer `id` (nothing when it ended).
    private func stopWaiting(_ token: UUID, for id: UUID) {
        guard let index = waiters[id]?.firstIndex(where: { $0.token == token }) else { return }
        let wait = waiters[id]?.remove(at: index)
        if waiters[id]?.isEmpty == true { waiters[id] = nil }
        wait?.continuation.resume(throwing: NetworkError.cancelled)
    }
}
