import Foundation

/// At most `limit` holders at once per origin (RFC 6454: scheme, host, port); further callers
/// wait in arrival order, and a waiter whose task is cancelled leaves the queue at once.
///
/// ``URLSessionTransport`` sends requests that may not reuse a connection (Linux: see
/// ``URLSessionTransport/needsFreshConnection(_:capabilities:)``) through a session each, so
/// URLSession's per-host pool never sees them together: without this bound, 200 concurrent `POST`s
/// to one host opened 200 TCP connections at once (1,000 opened 1,000). The transport takes a slot
/// per such request, with the limit of `httpMaximumConnectionsPerHost`, as the shared pool does for
/// the other requests.
///
/// A caller waiting here has sent nothing: cancelling it (its deadline, its task) sends nothing,
/// unlike a request queued inside URLSession's pool.
package final class PerOriginLimiter: Sendable {
    private struct Waiter: Sendable {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State: Sendable {
        var holders: [String: Int] = [:]
        var waiters: [String: [Waiter]] = [:]
        var nextID: UInt64 = 0
    }

    /// Holders allowed at once per origin (at least 1).
    package let limit: Int
    private let state = Locked(State())

    /// Creates a limiter allowing `limit` holders per origin (1 when `limit` is lower).
    package init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// The origin of `url` as a key (`scheme://host:port`, lowercased, default port filled in);
    /// `nil` for a URL without a host.
    package static func origin(of url: URL?) -> String? {
        guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
        let port = url.port ?? (scheme == "https" || scheme == "wss" ? 443 : 80)
        return "\(scheme)://\(host):\(port)"
    }

    /// Holders of `origin` right now (for tests).
    package func holders(of origin: String) -> Int { state.withLock { $0.holders[origin] ?? 0 } }

    /// Callers waiting for a slot of `origin` right now (for tests).
    package func waiterCount(of origin: String) -> Int { state.withLock { $0.waiters[origin]?.count ?? 0 } }

    /// Waits for a slot of `origin`; every successful return must be matched by one
    /// ``release(_:)``.
    ///
    /// - Throws: `CancellationError` when the calling task is cancelled before a slot was free
    ///   (then no slot is held).
    package func acquire(_ origin: String) async throws {
        let id = state.withLock { state -> UInt64 in
            defer { state.nextID &+= 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Outcome { case admitted, cancelled, queued }
                let outcome: Outcome = state.withLock { state in
                    // The cancellation flag is set before the handler runs, and the handler takes
                    // this lock: either it is visible here or the handler finds the waiter.
                    if Task.isCancelled { return .cancelled }
                    if state.holders[origin, default: 0] < limit, state.waiters[origin] == nil {
                        state.holders[origin, default: 0] += 1
                        return .admitted
                    }
                    state.waiters[origin, default: []].append(Waiter(id: id, continuation: continuation))
                    return .queued
                }
                switch outcome {
                case .admitted: continuation.resume()
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .queued: break
                }
            }
        } onCancel: {
            let waiter: Waiter? = state.withLock { state in
                guard var queue = state.waiters[origin], let index = queue.firstIndex(where: { $0.id == id }) else {
                    return nil
                }
                let waiter = queue.remove(at: index)
                state.waiters[origin] = queue.isEmpty ? nil : queue
                return waiter
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Runs `body` holding a slot of `url`'s origin (at once for a URL without a host), and gives
    /// the slot back when it returns or throws.
    ///
    /// - Throws: `URLError(.cancelled)` when the calling task is cancelled while it waits (nothing
    ///   was sent); what `body` throws.
    package func withSlot<T>(for url: URL?, _ body: () async throws -> T) async throws -> T {
        guard let origin = Self.origin(of: url) else { return try await body() }
        do {
            try await acquire(origin)
        } catch {
            throw URLError(.cancelled)
        }
        defer { release(origin) }
        return try await body()
    }

    /// Gives back a slot of `origin`: the longest waiter takes it over, if any.
    package func release(_ origin: String) {
        let next: Waiter? = state.withLock { state in
            if var queue = state.waiters[origin], !queue.isEmpty {
                let next = queue.removeFirst()
                state.waiters[origin] = queue.isEmpty ? nil : queue
                return next  // the slot passes to it: the holder count stays
            }
            let remaining = (state.holders[origin] ?? 1) - 1
            state.holders[origin] = remaining > 0 ? remaining : nil
            return nil
        }
        next?.continuation.resume()
    }
}
