import Courier
import Foundation

/// Hands one transfer's progress to any number of readers: each ``subscribe()`` gets the latest
/// value at once, then every later one, and ends when the transfer's own progress stream ends.
/// The transfer's stream has a single reader (the forwarding task ``forward(_:)`` starts), so
/// readers never split the values between them; a transfer without a stream of its own (a
/// background download) calls ``publish(_:)`` and ``finish()`` itself.
final class ProgressFanOut: Sendable {
    private struct State {
        var readers: [UUID: AsyncStream<TransferProgress>.Continuation] = [:]
        var latest: TransferProgress?
        var finished = false
    }

    private let state = Locked(State())

    /// A fan-out fed by `progress`, read to its end by a task of its own.
    static func forward(_ progress: AsyncStream<TransferProgress>) -> ProgressFanOut {
        let fanOut = ProgressFanOut()
        Task {
            for await value in progress { fanOut.publish(value) }
            fanOut.finish()
        }
        return fanOut
    }

    /// A stream of the latest value, then every later one; finished with the transfer.
    func subscribe() -> AsyncStream<TransferProgress> {
        let (stream, continuation) = AsyncStream<TransferProgress>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        let finished = state.withLock { state -> Bool in
            if let latest = state.latest { continuation.yield(latest) }
            if !state.finished { state.readers[id] = continuation }
            return state.finished
        }
        if finished {
            continuation.finish()
        } else {
            continuation.onTermination = { [weak self] _ in self?.state.withLock { _ = $0.readers.removeValue(forKey: id) } }
        }
        return stream
    }

    /// Hands `value` to every reader.
    func publish(_ value: TransferProgress) {
        let readers = state.withLock { state in
            state.latest = value
            return Array(state.readers.values)
        }
        for reader in readers { reader.yield(value) }
    }

    /// Ends every reader's stream, and the streams of readers that subscribe later.
    func finish() {
        let readers = state.withLock { state in
            state.finished = true
            defer { state.readers.removeAll() }
            return Array(state.readers.values)
        }
        for reader in readers { reader.finish() }
    }
}
