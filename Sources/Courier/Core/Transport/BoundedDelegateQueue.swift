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
package final class BoundedDelegateQueue: OperationQueue, @unchecked Sendable {
    /// The most operations queued or running before ``addOperation(_:)`` waits.
    package let maxPending: Int
    private let condition = NSCondition()
    /// Operations added and not yet finished; guarded by `condition`.
    private var pending = 0
    /// The most operations ever pending at once; guarded by `condition`.
    private var peak = 0
    /// Where the operations run (`underlyingQueue` does not keep it).
    private let dispatchQueue = DispatchQueue(label: "courier.urlsession.delegate")

    /// Creates a serial queue whose hand-over waits at `maxPending` operations (at least 1).
    package init(maxPending: Int = 16) {
        self.maxPending = max(1, maxPending)
        super.init()
        name = "courier.urlsession.delegate"
        maxConcurrentOperationCount = 1
        underlyingQueue = dispatchQueue
    }

    /// The most operations that were pending at once (tests and the bench read it).
    package var peakPendingCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return peak
    }

    /// Queues `block`, first waiting while `maxPending` operations are pending (unless called
    /// from this queue, which would wait for itself).
    override package func addOperation(_ block: @escaping @Sendable () -> Void) {
        let waits = OperationQueue.current !== self
        condition.lock()
        while waits && pending >= maxPending {
            // Bounded wait, then look again: a missed signal costs a second, never a hang.
            _ = condition.wait(until: Date(timeIntervalSinceNow: 1))
        }
        pending += 1
        peak = max(peak, pending)
        condition.unlock()
        super.addOperation { [self] in
            block()
            condition.lock()
            pending -= 1
            condition.broadcast()
            condition.unlock()
        }
    }
}
