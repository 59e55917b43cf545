import Courier
import Foundation

/// How long the file writes of downloads took lately, for the whole process: whether the next
/// writes may run on URLSession's delegate queue.
///
/// On Linux that queue's thread hands every URLSession of the process its data (FoundationNetworking
/// has one work queue, and Courier bounds the delegate queue behind it): while a download writes
/// there, every session waits. So writes keep to it only while they are quick: one write over
/// ``slowWrite``, or writes of all downloads adding up to ``budgetPerSecond`` within a second (a
/// disk that got slow, writeback throttling, several downloads at once), send every download's
/// writes to its reading thread for ``offDuration``; those transfers are then held or buffered as
/// for any reader. Measured: a disk throttled to 2 MiB/s during a 24 MiB download stalled a GET to
/// another server for 5.9–6.6 s when every write stayed on the delegate queue, 148–199 ms with this
/// rule.
final class DownloadWriteTiming: Sendable {
    /// The process's writes.
    static let process = DownloadWriteTiming()
    /// A single write this long sends writes off the delegate queue (20 ms; a 128 KiB write to the
    /// page cache takes about 30 µs), in nanoseconds.
    static let slowWrite: UInt64 = 20_000_000
    /// Writes adding up to this much within one second send them off the delegate queue (200 ms,
    /// the budget of `DeliveryHold` too; one 1 GiB download at loopback speed spends about 140 ms
    /// per second writing), in nanoseconds.
    static let budgetPerSecond: UInt64 = 200_000_000
    /// How long writes stay off the delegate queue after that (1 s), in nanoseconds.
    static let offDuration: UInt64 = 1_000_000_000

    /// Monotonic nanoseconds.
    private let clock: @Sendable () -> UInt64
    /// The current one-second window, the time written in it, and until when writes stay off the
    /// delegate queue (nanoseconds on `clock`).
    private let state = Locked((windowStart: UInt64(0), spent: UInt64(0), offUntil: UInt64(0)))

    /// - Parameter clock: Monotonic time in nanoseconds (`DispatchTime`'s uptime; injected in tests).
    init(clock: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
        self.clock = clock
    }

    /// The clock's time, in nanoseconds.
    func now() -> UInt64 { clock() }

    /// Whether writes may run on the delegate queue now.
    var admitsProducerThread: Bool {
        let now = clock()
        return state.withLock { now >= $0.offUntil }
    }

    /// Counts one write, from `start` to `end` (nanoseconds on the clock), wherever it ran.
    func account(start: UInt64, end: UInt64) {
        let took = end &- start
        state.withLock { state in
            if start &- state.windowStart >= 1_000_000_000 { (state.windowStart, state.spent) = (start, 0) }
            state.spent += took
            if took > Self.slowWrite || state.spent > Self.budgetPerSecond {
                state.offUntil = end + Self.offDuration
                (state.windowStart, state.spent) = (end, 0)
            }
        }
    }
}
