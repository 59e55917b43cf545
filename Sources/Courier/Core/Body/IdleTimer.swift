import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Fails a streamed body that received no byte for `idle`: the idle timeout Courier enforces
/// itself, because neither transport can. FoundationNetworking works in whole seconds (a 0.5 s
/// `timeoutInterval` fired within 0.2 s, 1.5 s acted as 1 s) and libcurl's low-speed limit
/// averages over a window (a 1 s limit noticed silence after 6-7 s); transports keep theirs only
/// as a later backstop (``backstop(for:)``).
///
/// One timer on the client's deadline scheduler, not one per chunk: each time it fires it
/// compares the time of the last arrival (recorded by the ``StreamBuffer``) with its clock and
/// either fails the body or sleeps until the last arrival plus `idle`. While the producer is
/// paused by a full buffer the consumer is the slow side: that time never counts, and the idle
/// time starts again when the producer resumes.
package enum IdleTimer {
    static func start(idle: Duration, buffer: StreamBuffer, deadlines: any DeadlineScheduling) {
        let idle = max(idle, .milliseconds(1))
        buffer.trackActivity { [weak deadlines] in deadlines?.elapsed ?? .zero }
        arm(after: idle, idle: idle, buffer: buffer, deadlines: deadlines)
    }

    private static func arm(after delay: Duration, idle: Duration, buffer: StreamBuffer, deadlines: any DeadlineScheduling) {
        // Weak both ways: a timer left in the scheduler after the body ended keeps neither alive.
        _ = deadlines.schedule(after: delay) { [weak buffer, weak deadlines] in
            guard let buffer, let deadlines else { return }
            check(idle: idle, buffer: buffer, deadlines: deadlines)
        }
    }

    private static func check(idle: Duration, buffer: StreamBuffer, deadlines: any DeadlineScheduling) {
        let activity = buffer.activity
        guard !activity.finished else { return }
        if activity.paused {
            arm(after: idle, idle: idle, buffer: buffer, deadlines: deadlines)
            return
        }
        let silent = deadlines.elapsed - activity.lastActivity
        if silent >= idle {
            buffer.abort(with: .timedOut(timedOut(idle)))
        } else {
            arm(after: idle - silent, idle: idle, buffer: buffer, deadlines: deadlines)
        }
    }

    /// The error of a body that went silent: `URLError(.timedOut)`, the code URLSession uses for
    /// its own idle timeout, saying how long the silence was.
    private static func timedOut(_ idle: Duration) -> URLError {
        URLError(
            .timedOut,
            userInfo: [NSLocalizedDescriptionKey: "no bytes received for \(idle) (StreamingOptions.idleTimeout)"])
    }

    /// The idle timeout a transport keeps under Courier's: whole seconds, at least one second more
    /// than `idle`, so FoundationNetworking's rounding or libcurl's averaging never fire first.
    /// At most a year and a day: an `idle` of `.seconds(Int64.max)` ("never") must not overflow.
    package static func backstop(for idle: Duration) -> Duration {
        let parts = idle.components
        let seconds = min(parts.seconds, longestBackstopSeconds) + (parts.attoseconds > 0 ? 1 : 0)
        return .seconds(max(1, seconds) + 1)
    }

    /// The longest backstop in seconds (366 days).
    static let longestBackstopSeconds: Int64 = 366 * 24 * 3600
}
