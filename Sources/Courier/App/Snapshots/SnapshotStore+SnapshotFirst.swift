import Foundation

extension SnapshotStore {
    /// A snapshot-first read: the saved snapshot at once (when there is one), then the value from
    /// the network, which is saved as the new snapshot.
    ///
    /// ```swift
    /// for try await state in snapshots.snapshotFirst(key: "catalog", fetch: { try await api.catalog() }) {
    ///     render(state.value, stale: !state.isFresh)
    /// }
    /// ```
    ///
    /// The stream yields, in order:
    /// 1. ``SnapshotState/snapshot(_:age:)`` — only when a usable snapshot exists (see the store's
    ///    invalidation rules), marked with its age in seconds;
    /// 2. ``SnapshotState/fresh(_:)`` — the fetched value, saved (a failed save still yields it),
    ///    then the stream finishes. When `key` was written while `fetch` ran (``save(_:key:)``,
    ///    ``remove(key:)`` after a mutation, or another read that started later and finished
    ///    first), the value is yielded but not saved: it may predate that write.
    ///
    /// When `fetch` throws, the stream finishes by throwing that error; the snapshot already
    /// yielded stays valid and stays saved, so the screen keeps showing it next to the error.
    /// Cancelling the consuming task cancels `fetch`, and nothing is saved. When ``removeAll()``
    /// runs while `fetch` is under way (a logout), the fetched value is neither saved nor yielded:
    /// the stream finishes with `NetworkError.cancelled`.
    ///
    /// - Parameters:
    ///   - key: The snapshot's key, e.g. `"catalog"` or `"orders?page=1"`.
    ///   - type: The value type.
    ///   - maxSnapshotAge: Snapshots older than this are not shown; `nil` for no limit.
    ///   - fetch: Loads the fresh value; its errors end the stream.
    /// - Returns: A stream of one or two states.
    public nonisolated func snapshotFirst<Value: Codable & Sendable>(
        key: String, as type: Value.Type = Value.self, maxSnapshotAge: Duration? = nil,
        fetch: @escaping @Sendable () async throws -> Value
    ) -> AsyncThrowingStream<SnapshotState<Value>, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                let start = await self.beginRead()
                if let snapshot = await self.load(Value.self, key: key, maxAge: maxSnapshotAge) {
                    let age = snapshot.age(at: await self.currentDate())
                    continuation.yield(.snapshot(snapshot, age: age))
                }
                do {
                    let value = try await fetch()
                    try Task.checkCancellation()
                    let saved: Snapshot<Value>
                    do {
                        switch try await self.save(value, key: key, readStart: start) {
                        case .saved(let stored):
                            saved = stored
                        case .superseded:
                            // Written since the fetch began: what is stored may be newer than it.
                            saved = Snapshot(value: value, savedAt: await self.currentDate())
                        case .cleared:
                            // The store was cleared (a logout) while the value was fetched: it is
                            // the previous session's, for no one to see now.
                            continuation.finish(throwing: NetworkError.cancelled)
                            return
                        }
                    } catch {
                        // A failed save still shows the value (documented); the next read fetches again.
                        saved = Snapshot(value: value, savedAt: await self.currentDate())
                    }
                    continuation.yield(.fresh(saved))
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
