import Foundation

/// The delegate queue of ``URLSessionTransport``'s sessions where URLSession cannot pause a task
/// but hands each received chunk over from the thread that reads the socket
/// (``TransportCapabilities/boundsDelegateQueue``: FoundationNetworking).
///
/// FoundationNetworking queues every chunk libcurl delivers (at most 16 KiB each) as one
/// operation on the session's delegate queue and never waits for it: measured, a 1 GiB download
/// left up to 900 chunks (about 14 MiB) queued behind a delegate thread that got too little CPU,
/// on top of the stream buffer, and nothing bounded it. This queue makes the hand-over wait while
/// `maxPending` operations are queued or running, so the socket is read only as fast as the
/// delegate takes the chunks: memory between libcurl and Courier's stream buffer stays below
/// `maxPending` chunks (16 by default: 256 KiB), and a delegate operation that waits (a full
/// buffer whose consumer drains continuously, see ``StreamingOptions/drainsContinuously``) holds
/// the transfer back.
///
/// The waiting thread is FoundationNetworking's work queue, which every URLSession of the process
/// shares (it targets one serial queue): while it waits no session reads the network, as when
/// FoundationNetworking writes a download task's file on that queue itself. It waits only while the
/// delegate is behind, never for a consumer that may stop reading: streams read by the app fail
/// with ``NetworkError/streamBufferOverflow(limit:)`` instead of holding, and a hold lasts at most
/// ``DeliveryHold/defaultMaxHold`` (100 ms) (a consumer on a pool whose threads all wait in URLSession calls for
/// this very queue could never catch up). Operations run on a
/// serial dispatch queue of this queue's own (an overcommitting one: a delegate that waits blocks
/// none of the cooperative pool's threads), and an operation added from this queue never waits.
///
/// A block goes straight onto that dispatch queue, without an `Operation` around it:
/// FoundationNetworking hands over every delegate call, one per received chunk of at most 16 KiB,
/// with ``addOperation(_:)``, and `OperationQueue`'s own bookkeeping for each (a `BlockOperation`,
/// its state changes and locks) was a large share of a download's CPU (measured: a 1 GiB download
/// over URLSession on a 2-core machine ran at 148–200 MiB/s). Operations added as `Operation`
/// objects (FoundationNetworking adds none) still run on the same serial dispatch queue.
package final class BoundedDelegateQueue: OperationQueue, @unchecked Sendable {
    /// The most operations queued or running before ``addOperation(_:)`` waits.
    package let maxPending: Int
    private let condition = NSCondition()
    /// Operations added and not yet finished; guarded by `condition`.
    private var pending = 0
    /// The most operations ever pending at once; guarded by `condition`.
    private var peak = 0
    /// Hand-overs waiting for the queue to drain; guarded by `condition`.
    private var waiting = 0
    /// Where the operations run (`underlyingQueue` does not keep it).
    private let dispatchQueue = DispatchQueue(label: "courier.urlsession.delegate")
    /// Marks `dispatchQueue`'s own thread (blocks run there, not as operations of this queue, so
    /// `OperationQueue.current` cannot tell).
    private static let marker = DispatchSpecificKey<ObjectIdentifier>()

    /// Creates a serial queue whose hand-over waits at `maxPending` operations (at least 1).
    package init(maxPending: Int = 16) {
        self.maxPending = max(1, maxPending)
        super.init()
        name = "courier.urlsession.delegate"
        maxConcurrentOperationCount = 1
        underlyingQueue = dispatchQueue
        dispatchQueue.setSpecific(key: Self.marker, value: ObjectIdentifier(self))
    }

    /// The most operations that were pending at once (tests and the bench read it).
    package var peakPendingCount: Int { read { $0.peak } }

    /// Blocks handed over and not yet finished (the bench's trace reads it).
    package var pendingCount: Int { read { $0.pending } }

    /// Hand-overs waiting for the queue to drain (tests read it).
    package var waitingCount: Int { read { $0.waiting } }

    /// Reads a counter under `condition`.
    private func read(_ counter: (BoundedDelegateQueue) -> Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        return counter(self)
    }

    /// Runs `block` on the queue's serial dispatch queue, first waiting while `maxPending` blocks
    /// are pending (unless called from this queue, which would wait for itself).
    override package func addOperation(_ block: @escaping @Sendable () -> Void) {
        let waits = DispatchQueue.getSpecific(key: Self.marker) != ObjectIdentifier(self)
        condition.lock()
        if waits && pending >= maxPending {
            waiting += 1
            // Until half the bound has drained (hysteresis: one wake-up per `maxPending / 2` blocks).
            // Bounded waits, then look again: a missed signal costs a second, never a hang.
            repeat { _ = condition.wait(until: Date(timeIntervalSinceNow: 1)) } while pending > maxPending / 2
            waiting -= 1
        }
        pending += 1
        peak = max(peak, pending)
        condition.unlock()
        dispatchQueue.async { [self] in
            block()
            condition.lock()
            pending -= 1
            // Wakes a waiting hand-over once half the bound has drained, not after every block:
            // one wake-up of the socket's reader per `maxPending / 2` chunks, not one per chunk.
            if waiting > 0 && pending <= maxPending / 2 { condition.broadcast() }
            condition.unlock()
        }
    }
}
