import Foundation

/// Runs calls so that the latest one of each key wins: starting a call cancels the call of the same
/// key still running (or still waiting out its debounce) — typeahead search, a filter changed
/// while its results load, a detail screen swiped past.
///
/// A superseded call ends with ``NetworkError/cancelled`` (never shown to users, see
/// ``NetworkError/isCancellation``) as soon as the newer call starts — also when its operation
/// does not stop on cancellation: its caller does not wait for it, and whatever it finishes with
/// later (a value, another error) is dropped. Its request, if it had left, is cancelled, so the
/// server sees the connection's request end. With a `debounce`, a call first waits that long on the given clock
/// and sends nothing if a newer call of its key arrives meanwhile.
///
/// ```swift
/// final class SearchModel {
///     private let search = LatestWins(debounce: .milliseconds(300))
///
///     func textDidChange(_ text: String) async {
///         do {
///             let items: [Item] = try await search.run {
///                 try await client.send(Request<[Item]>.get("/items", query: ["q": text]))
///             }
///             show(items)
///         } catch let error as NetworkError where error.isCancellation {
///             // superseded by a newer keystroke: nothing to show
///         } catch {
///             show(error)
///         }
///     }
/// }
/// ```
public actor LatestWins {
    private let debounce: Duration
    private let clock: any Clock<Duration>
    /// The running call of each key, by its number.
    private var running: [String: (number: Int, cancel: @Sendable () -> Void)] = [:]
    private var counter = 0

    /// Creates the gate.
    ///
    /// - Parameters:
    ///   - debounce: How long a call waits before it starts, on `clock`; none by default.
    ///   - clock: The clock of the debounce; `ContinuousClock` by default (inject a test clock).
    public init(debounce: Duration = .zero, clock: any Clock<Duration> = ContinuousClock()) {
        self.debounce = max(.zero, debounce)
        self.clock = clock
    }

    /// Runs `operation` as the latest call of `key`, cancelling the previous call of that key.
    ///
    /// - Parameters:
    ///   - key: Which calls supersede each other; one key for all calls by default.
    ///   - operation: The call, e.g. `client.send(…)`. It runs in a task of its own that this
    ///     call awaits; cancelling the caller cancels it too.
    /// - Returns: What `operation` returned.
    /// - Throws: ``NetworkError/cancelled`` when a newer call of `key` superseded this one (or the
    ///   caller was cancelled); otherwise what `operation` threw.
    public func run<T: Sendable>(key: String = "", _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        counter += 1
        let number = counter
        running[key]?.cancel()
        let debounce = self.debounce
        let clock = self.clock
        let outcome = LatestWinsOutcome<T>()
        let task = Task {
            do {
                if debounce > .zero { try await clock.sleep(for: debounce) }
                try Task.checkCancellation()
                let value = try await operation()
                // Superseded (or its caller cancelled) while an operation that does not check for
                // cancellation finished anyway: its result is stale, for no one to show.
                outcome.settle(Task.isCancelled ? .failure(NetworkError.cancelled) : .success(value))
            } catch {
                // Whatever a superseded operation threw (a late server error, a timeout) is stale too.
                outcome.settle(.failure(Task.isCancelled ? NetworkError.cancelled : error))
            }
        }
        // Superseding a call ends it at once: its caller never waits for an operation that does
        // not stop on cancellation.
        let stop: @Sendable () -> Void = {
            task.cancel()
            outcome.settle(.failure(NetworkError.cancelled))
        }
        running[key] = (number, stop)
        defer { if running[key]?.number == number { running[key] = nil } }
        return try await withTaskCancellationHandler {
            try await outcome.value()
        } onCancel: {
            stop()
        }
    }
}

/// The one result of a ``LatestWins`` call: the operation's, or `cancelled` when the call was
/// superseded or its caller cancelled — whichever comes first; later ones are dropped.
private final class LatestWinsOutcome<T: Sendable>: Sendable {
    private enum State: Sendable {
        case pending(CheckedContinuation<T, any Error>?)
        case settled(Result<T, any Error>)
        case delivered
    }

    private let state = Locked<State>(.pending(nil))

    /// Settles the call with `result` unless it is settled already.
    func settle(_ result: Result<T, any Error>) {
        let waiter: CheckedContinuation<T, any Error>? = state.withLock { state in
            guard case .pending(let waiter) = state else { return nil }
            if let waiter {
                state = .delivered
                return waiter
            }
            state = .settled(result)
            return nil
        }
        waiter?.resume(with: result)
    }

    /// Waits for the result.
    func value() async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let settled: Result<T, any Error>? = state.withLock { state in
                switch state {
                case .settled(let result):
                    state = .delivered
                    return result
                case .pending:
                    state = .pending(continuation)
                    return nil
                case .delivered:
                    return .failure(NetworkError.cancelled)  // not reached: one waiter per call
                }
            }
            if let settled { continuation.resume(with: settled) }
        }
    }
}
