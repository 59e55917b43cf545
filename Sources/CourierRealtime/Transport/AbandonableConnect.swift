import Courier

/// Runs connects that cannot be interrupted, one at a time, and gives up waiting for one when the
/// caller is cancelled.
///
/// On Apple platforms TCP and TLS setup and an unanswered opening handshake end only at the
/// connect timeout (15 s by default); over libcurl with Courier's RFC 6455 client they end at once
/// when the attempt's task is cancelled (the handshake's stream is closed): a `close()` or
/// `enterBackground()` meanwhile would otherwise wait that long, longer than iOS grants an app
/// going to the background. The connect runs in a task of its
/// own: a cancelled caller gets `CancellationError` at once, and a connection that still opens
/// afterwards is dropped without a closing handshake (nobody owns it). The next connect waits for
/// such an abandoned one to end (at the latest at its connect timeout; the wait itself gives way
/// to cancellation), so one client never has two attempts under way at once.
final class AbandonableConnect: Sendable {
    /// The last connect started; an abandoned one may still be running.
    private let last = Locked<Task<Void, Never>?>(nil)

    func run(
        _ connect: @escaping @Sendable () async throws -> any WebSocketConnection
    ) async throws -> any WebSocketConnection {
        if let previous = last.current { try await Self.waitCancellably(for: previous) }
        let waiter = Waiter<any WebSocketConnection>()
        let attempt = Task {
            let result = await Result(catching: { try await connect() })
            if !waiter.finish(with: result), case .success(let connection) = result {
                await connection.abort(.connectionFailed("closed by the app while connecting"))
            }
        }
        last.set(attempt)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiter.wait(with: continuation)
            }
        } onCancel: {
            attempt.cancel()
            _ = waiter.finish(with: .failure(CancellationError()))
        }
    }

    /// Returns when `task` has ended, or throws `CancellationError` as soon as the caller is
    /// cancelled (awaiting a task's value alone would not give way).
    private static func waitCancellably(for task: Task<Void, Never>) async throws {
        let waiter = Waiter<Void>()
        let watcher = Task {
            await task.value
            _ = waiter.finish(with: .success(()))
        }
        defer { watcher.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiter.wait(with: continuation)
            }
        } onCancel: {
            _ = waiter.finish(with: .failure(CancellationError()))
        }
    }

    /// The one outcome the caller gets: the connect's, or the cancellation's, whichever is first.
    private final class Waiter<Value: Sendable>: Sendable {
        private enum State {
            case idle
            case waiting(CheckedContinuation<Value, any Error>)
            case finished(Result<Value, any Error>?)
        }
        private let state = Locked<State>(.idle)

        /// Parks the caller; resumes it at once when the outcome is already in.
        func wait(with continuation: CheckedContinuation<Value, any Error>) {
            let outcome = state.withLock { state -> Result<Value, any Error>? in
                switch state {
                case .idle:
                    state = .waiting(continuation)
                    return nil
                case .waiting:
                    return nil  // never: one caller
                case .finished(let result):
                    state = .finished(nil)
                    return result
                }
            }
            if let outcome { continuation.resume(with: outcome) }
        }

        /// Delivers `result` if no outcome was delivered yet; returns whether it was.
        func finish(with result: Result<Value, any Error>) -> Bool {
            let (delivered, continuation) = state.withLock {
                state -> (Bool, CheckedContinuation<Value, any Error>?) in
                switch state {
                case .idle:
                    state = .finished(result)
                    return (true, nil)
                case .waiting(let continuation):
                    state = .finished(nil)
                    return (true, continuation)
                case .finished:
                    return (false, nil)
                }
            }
            continuation?.resume(with: result)
            return delivered
        }
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing `body`.
    fileprivate init(catching body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
