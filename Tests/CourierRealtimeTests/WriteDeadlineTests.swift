import Foundation
import Testing
import Courier
@testable import CourierRealtime

/// The write deadline both WebSocket transports use (`URLSessionWebSocketTask` on Apple platforms
/// has none of its own): a write still running when the deadline passes fails the connection,
/// which ends the write; a write that ends first cancels the watchdog.
@Suite("WebSocket write deadline")
struct WriteDeadlineTests {
    /// A write blocked until the connection fails (as a socket write to a peer that stopped reading).
    final class BlockedWrite: Sendable {
        private let state = Locked<(failed: Bool, waiter: CheckedContinuation<Void, any Error>?)>((false, nil))
        let expirations = Locked(0)

        func write() async throws {
            try await withCheckedThrowingContinuation { continuation in
                let failed = state.withLock { state -> Bool in
                    if !state.failed { state.waiter = continuation }
                    return state.failed
                }
                if failed { continuation.resume(throwing: WebSocketError.writeTimeout(seconds: 30)) }
            }
        }

        /// The connection fails: the pending write ends with the timeout.
        func fail() {
            expirations.withLock { $0 += 1 }
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                state.failed = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(throwing: WebSocketError.writeTimeout(seconds: 30))
        }
    }

    @Test("a write still running at the deadline fails the connection once, which ends the write")
    func stalledWriteExpires() async throws {
        let blocked = BlockedWrite()
        await #expect(throws: WebSocketError.writeTimeout(seconds: 30)) {
            // The deadline passes at once on the injected clock.
            try await WriteDeadline.run(
                timeout: .seconds(30), sleep: { _ in }, expired: { blocked.fail() }, write: { try await blocked.write() })
        }
        #expect(blocked.expirations.current == 1)
    }

    @Test("a write that ends first never fails the connection")
    func finishedWriteDoesNotExpire() async throws {
        let expirations = Locked(0)
        let slept = Locked<[Duration]>([])
        try await WriteDeadline.run(
            timeout: .seconds(30),
            sleep: { duration in
                slept.withLock { $0.append(duration) }
                // Ends only when cancelled: the write's end cancels it.
                try await Task.sleep(for: .seconds(3600))
            },
            expired: { expirations.withLock { $0 += 1 } },
            write: {})
        // The watchdog was cancelled before its deadline: give it the chance to run to its end.
        for _ in 0..<100 { await Task.yield() }
        #expect(expirations.current == 0)
        #expect(slept.current.allSatisfy { $0 == .seconds(30) })
    }
}
