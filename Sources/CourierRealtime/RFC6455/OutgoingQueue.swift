/// What ``RFC6455Connection``'s writer sends next: control frames (pings, pongs, an urgent Close)
/// ahead of data frames not yet started, each lane first in, first out. A message's fragments are
/// separate items, so control frames may go between them (RFC 6455 §5.4) but never inside a frame.
struct OutgoingQueue {
    /// One frame (or several small control frames written together) and who waits for it.
    struct Item {
        var bytes: [UInt8]
        /// Resumed when the bytes are written (the last fragment of a message), or with the error.
        var done: CheckedContinuation<Void, any Error>?
        /// The item ends with our Close frame.
        var isClose = false
        /// How many of our pings the item carries.
        var pings = 0
    }

    private var control: [Item] = []
    private var controlHead = 0
    private var data: [Item] = []
    private var dataHead = 0

    /// Small control frames written in one call, in bytes at most.
    static let coalescingLimit = 16 * 1024

    /// Appends a ping (`isPing`) or a pong.
    mutating func enqueueControl(_ bytes: [UInt8], isPing: Bool = false) {
        control.append(Item(bytes: bytes, pings: isPing ? 1 : 0))
    }

    /// Appends a message's frames; `done` is resumed once the last one is written.
    mutating func enqueueData(_ frames: [[UInt8]], done: CheckedContinuation<Void, any Error>) {
        for (index, bytes) in frames.enumerated() {
            data.append(Item(bytes: bytes, done: index == frames.count - 1 ? done : nil))
        }
    }

    /// Appends our Close frame. `urgent` (answering the server's Close, failing the connection):
    /// in the control lane, and the data frames not started are dropped — their waiters are
    /// returned, to be failed. Otherwise (the app's close) after the data already queued.
    mutating func enqueueClose(_ bytes: [UInt8], urgent: Bool) -> [CheckedContinuation<Void, any Error>] {
        let close = Item(bytes: bytes, isClose: true)
        guard urgent else {
            data.append(close)
            return []
        }
        control.append(close)
        let dropped = data[dataHead...].compactMap(\.done)
        data = []
        dataHead = 0
        return dropped
    }

    /// The next bytes to write: the control lane first (consecutive small control frames merged
    /// up to ``coalescingLimit``), then the data lane; nil when both are empty.
    mutating func next() -> Item? {
        if controlHead < control.count {
            var item = control[controlHead]
            controlHead += 1
            while !item.isClose, controlHead < control.count,
                item.bytes.count + control[controlHead].bytes.count <= Self.coalescingLimit
            {
                item.bytes += control[controlHead].bytes
                item.isClose = control[controlHead].isClose
                item.pings += control[controlHead].pings
                controlHead += 1
            }
            compact()
            return item
        }
        guard dataHead < data.count else { return nil }
        let item = data[dataHead]
        dataHead += 1
        compact()
        return item
    }

    /// Empties both lanes; returns the waiters of what was never written.
    mutating func removeAll() -> [CheckedContinuation<Void, any Error>] {
        let waiters = control[controlHead...].compactMap(\.done) + data[dataHead...].compactMap(\.done)
        control = []
        controlHead = 0
        data = []
        dataHead = 0
        return waiters
    }

    private mutating func compact() {
        if controlHead == control.count {
            control = []
            controlHead = 0
        }
        if dataHead == data.count {
            data = []
            dataHead = 0
        }
    }
}
