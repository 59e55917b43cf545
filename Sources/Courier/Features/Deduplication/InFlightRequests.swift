import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The shared requests of a ``DeduplicationInterceptor``: one unstructured task per distinct
/// request, with reference-counted waiters.
///
/// Every waiter is a continuation resumed exactly once: by the result, or by its own
/// cancellation (whichever comes first under the lock). The task is cancelled only when its last
/// waiter leaves.
final class InFlightRequests: Sendable {
    struct Key: Hashable, Sendable {
        var partition: String
        /// The session the request belongs to: bumped by a session reset (sign-out), so a call of
        /// the next account never joins a request of the previous one still in flight.
        var session: Int = 0
        /// The sign-in (`TokenManager.currentSession`) of each of the lane's token managers
        /// when an authorized call reached the interceptor: another account's call never joins.
        var signIns: [Int] = []
        /// The cache generation of the call's URL (`CacheGenerationKey`): a call made after the
        /// URL was invalidated (a write to it) never joins a request sent before.
        var cacheGeneration: HTTPCache.Generation?
        var method: String
        var url: String
        var headers: [String]
        /// The body of a request declared safe (a GraphQL query sent as POST); `nil` for GET/HEAD.
        var body: Data?
    }

    struct Delivery: Sendable {
        var response: HTTPResponse
        var role: DeduplicationRole
    }

    private typealias Waiter = CheckedContinuation<Delivery, any Error>

    private struct Flight: Sendable {
        var token: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: Waiter] = [:]
        var joinOrder: [UInt64] = []
    }

    private struct State: Sendable {
        var flights: [Key: Flight] = [:]
        var nextID: UInt64 = 0
    }

    private let state = Locked(State())

    /// Number of distinct requests in flight.
    var count: Int { state.withLock { $0.flights.count } }

    /// Number of callers waiting across all requests in flight.
    var waiterCount: Int { state.withLock { $0.flights.values.reduce(0) { $0 + $1.waiters.count } } }

    /// The response of `operation`, shared with every concurrent caller using the same `key`.
    /// - Throws: The operation's error, or `CancellationError` when this caller was cancelled.
    func response(for key: Key, operation: @escaping @Sendable () async throws -> HTTPResponse) async throws -> Delivery {
        let id = state.withLock { state -> UInt64 in
            state.nextID &+= 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                join(key, id: id, continuation, operation)
            }
        } onCancel: {
            leave(key, id: id)
        }
    }

    private func join(
        _ key: Key, id: UInt64, _ continuation: Waiter, _ operation: @escaping @Sendable () async throws -> HTTPResponse
    ) {
        state.withLock { state in
            // Cancelled before joining: onCancel may already have run and found nothing to remove.
            if Task.isCancelled {
                continuation.resume(throwing: CancellationError())
                return
            }
            if state.flights[key] != nil {
                state.flights[key]?.waiters[id] = continuation
                state.flights[key]?.joinOrder.append(id)
                return
            }
            state.nextID &+= 1
            let token = state.nextID
            var flight = Flight(token: token)
            flight.waiters[id] = continuation
            flight.joinOrder = [id]
            // Created under the lock, so `complete` (which takes the lock) runs after registration.
            flight.task = Task { [weak self] in
                let result: Result<HTTPResponse, any Error>
                do { result = .success(try await operation()) } catch { result = .failure(error) }
                self?.complete(key, token: token, result)
            }
            state.flights[key] = flight
        }
    }

    private func leave(_ key: Key, id: UInt64) {
        let waiter: Waiter? = state.withLock { state in
            guard var flight = state.flights[key], let waiter = flight.waiters.removeValue(forKey: id) else { return nil }
            flight.joinOrder.removeAll { $0 == id }
            if flight.waiters.isEmpty {
                flight.task?.cancel()
                state.flights[key] = nil
            } else {
                state.flights[key] = flight
            }
            return waiter
        }
        waiter?.resume(throwing: CancellationError())
    }

    private func complete(_ key: Key, token: UInt64, _ result: Result<HTTPResponse, any Error>) {
        let waiters: [(Waiter, DeduplicationRole)] = state.withLock { state in
            guard let flight = state.flights[key], flight.token == token else { return [] }
            state.flights[key] = nil
            return flight.joinOrder.enumerated().compactMap { index, id in
                flight.waiters[id].map { ($0, index == 0 ? .primary : .joined) }
            }
        }
        for (waiter, role) in waiters {
            switch result {
            case .success(let response): waiter.resume(returning: Delivery(response: response, role: role))
            case .failure(let error): waiter.resume(throwing: error)
            }
        }
    }
}
