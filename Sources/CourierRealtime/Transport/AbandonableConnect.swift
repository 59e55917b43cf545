import Courier

/// Runs a connect that cannot be interrupted and gives up waiting for it when the caller is
/// cancelled.
///
/// libcurl's TCP and TLS setup and an unanswered opening handshake end only at the connect
/// timeout (10 s by default, each); a `close()` or `enterBackground()` meanwhile would wait that
/// long, longer than iOS grants an app going to the background. The connect runs in a task of its
/// own: a cancelled caller gets `CancellationError` at once, and a connection that still opens
/// afterwards is dropped without a closing handshake (nobody owns it).
enum AbandonableConnect {
    static func run(
        _ connect: @escaping @Sendable () async throws -> any WebSocketConnection
    ) async throws -> any WebSocketConnection {
        let waiter = Waiter()
        let attempt = Task {
            let result = await Result(catching: { try await connect() })
            if !waiter.finish(with: result), case .success(let connection) = result {
                await connection.abort(.connectionFailed("closed by the app while connecting"))
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiter.wait(with: continuation)
            }
        } onCancel: {
            attempt.cancel()
            _ = waiter.finish(with: .failure(CancellationError()))
        }
    }

    /// The one outcome the caller gets: the connect's, or the cancellation's, whichever is first.
    private final class Waiter: Sendable {
        private enum State {
            case idle
            case waiting(CheckedContinuation<any WebSocketConnection, any Error>)
            case finished(Result<any WebSocketConnection, any Error>?)
        }
        private let state = Locked<State>(.idle)

        /// Parks the caller; resumes it at once when the outcome is already in.
        func wait(with continuation: CheckedContinuation<any WebSocketConnection, any Error>) {
            let outcome = state.withLock { state -> Result<any WebSocketConnection, any Error>? in
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
        func finish(with result: Result<any WebSocketConnection, any Error>) -> Bool {
            let (delivered, continuation) = state.withLock {
                state -> (Bool, CheckedContinuation<any WebSocketConnection, any Error>?) in
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
