/// Gap detection for feeds whose messages carry increasing sequence numbers: when a message
/// arrives with a number past the next expected one (a gap, typically across a reconnect), the
/// client publishes ``RealtimeEvent/gap(missing:)`` and sends `requestMissed(range)` if that returns
/// a message (for example `{"type":"replay","from":41,"to":44}`).
public struct SequenceTracking: Sendable {
    /// The sequence number of a message, or nil for messages without one.
    public var sequenceNumber: @Sendable (WebSocketMessage) -> Int?
    /// The message asking the server for the missing numbers; nil asks nothing.
    public var requestMissed: @Sendable (ClosedRange<Int>) -> WebSocketMessage?

    /// Creates the hook.
    public init(
        sequenceNumber: @escaping @Sendable (WebSocketMessage) -> Int?,
        requestMissed: @escaping @Sendable (ClosedRange<Int>) -> WebSocketMessage?
    ) {
        self.sequenceNumber = sequenceNumber
        self.requestMissed = requestMissed
    }
}

/// The last sequence number seen; finds gaps.
struct SequenceGapDetector: Sendable {
    private(set) var last: Int?

    /// Records `number`; returns the missing range when it skips ahead. Older or repeated numbers
    /// (replayed messages) never move `last` back.
    mutating func record(_ number: Int) -> ClosedRange<Int>? {
        defer { last = max(last ?? number, number) }
        // `last < Int.max` first: a server's number may be anything, and `last + 1` must not trap.
        guard let last, last < Int.max, number > last + 1 else { return nil }
        return (last + 1)...(number - 1)
    }
}
