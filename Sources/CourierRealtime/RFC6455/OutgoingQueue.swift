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
        /// The item is a pong not yet written.
        var isPong = false
        /// The number of the message whose frame this is (data lane only).
        var message: Int?
        /// The item is the message's first frame.
        var startsMessage = false
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

    /// Pong bytes queued and not yet written.
    private var pongBytes = 0
    /// The most pong bytes queued before a new pong replaces the last one waiting (256 KiB: a
    /// storm of thousands of pings is answered ping by ping).
    static let pongBytesLimit = 256 * 1024

    /// Queues the pong answering a ping, after the pongs already waiting, so pongs answer pings in
    /// order. Past ``pongBytesLimit`` of unwritten pongs, the new pong replaces the last one
    /// waiting instead (RFC 6455 §5.5.3 lets an endpoint answer only the most recent ping): a peer
    /// that sends pings and stops reading holds a bounded queue, not one pong per ping.
    mutating func enqueuePong(_ bytes: [UInt8]) {
        if pongBytes + bytes.count > Self.pongBytesLimit,
            let last = control[controlHead...].lastIndex(where: \.isPong)
        {
            pongBytes += bytes.count - control[last].bytes.count
            control[last].bytes = bytes
        } else {
            control.append(Item(bytes: bytes, isPong: true))
            pongBytes += bytes.count
        }
    }

    /// Appends a message's frames; `done` is resumed once the last one is written. `message`
    /// numbers it for ``withdraw(message:)``.
    mutating func enqueueData(_ frames: [[UInt8]], message: Int? = nil, done: CheckedContinuation<Void, any Error>) {
        for (index, bytes) in frames.enumerated() {
            data.append(
                Item(bytes: bytes, done: index == frames.count - 1 ? done : nil, message: message, startsMessage: index == 0))
        }
    }

    /// Removes message `message` when none of its frames has been taken for writing yet (a frame
    /// started on the wire must be finished, and so must the message); returns its waiter, to be
    /// resumed by the caller. nil when it was written, is being written, or is not queued.
    mutating func withdraw(message: Int) -> CheckedContinuation<Void, any Error>? {
        // Frames are taken in order: the message has not started while its first frame is queued.
        guard let first = data[dataHead...].firstIndex(where: { $0.message == message }), data[first].startsMessage
        else { return nil }
        var end = first
        while end < data.count, data[end].message == message { end += 1 }
        let done = data[first..<end].compactMap(\.done).first
        data.removeSubrange(first..<end)
        compact()
        return done
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
            if item.isPong { pongBytes -= item.bytes.count }
            controlHead += 1
            while !item.isClose, controlHead < control.count,
                item.bytes.count + control[controlHead].bytes.count <= Self.coalescingLimit
            {
                if control[controlHead].isPong { pongBytes -= control[controlHead].bytes.count }
                item.bytes += control[controlHead].bytes
                item.isClose = control[controlHead].isClose
                item.pings += control[controlHead].pings
                item.isPong = false
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
        pongBytes = 0
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
