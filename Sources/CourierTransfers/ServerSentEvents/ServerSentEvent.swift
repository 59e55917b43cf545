import Courier

/// One event dispatched from a `text/event-stream` (WHATWG HTML §9.2.6 "Interpreting an event
/// stream"): what a browser's `EventSource` hands to a `MessageEvent`.
///
/// ```
/// event: price        → type "price"
/// id: 42              → lastEventID "42"
/// data: {"p": 1.5}    → data "{\"p\": 1.5}"
///                     (blank line: dispatch)
/// ```
public struct ServerSentEvent: Sendable, Hashable {
    /// The event type: the last `event` field of the block, or `message` when the block had none
    /// (or an empty one).
    public var type: String
    /// The `data` fields of the block joined with LF (U+000A), without a trailing LF. May be empty
    /// (a block with a bare `data` line); a block without any `data` field is never dispatched.
    public var data: String
    /// The stream's last event ID when the event was dispatched: the most recent `id` field, in
    /// this block or an earlier one (also across reconnects), `""` when none was sent or an empty
    /// `id` reset it. It is what `Last-Event-ID` carries on the next connection (§9.2.4).
    public var lastEventID: String
    /// The reconnection time set by a valid `retry` field (milliseconds, ASCII digits only) since
    /// the previous dispatched event, `nil` when there was none. A `retry`-only block is not
    /// dispatched; ``ServerSentEventParser/reconnectionTime`` keeps the current value.
    public var retry: Duration?

    /// Creates an event.
    /// - Parameters:
    ///   - type: The event type; `message` by default.
    ///   - data: The data, lines joined with LF.
    ///   - lastEventID: The last event ID; `""` by default.
    ///   - retry: A reconnection time announced with the event; `nil` by default.
    public init(type: String = "message", data: String, lastEventID: String = "", retry: Duration? = nil) {
        self.type = type
        self.data = data
        self.lastEventID = lastEventID
        self.retry = retry
    }
}

extension ServerSentEvent: CustomStringConvertible {
    public var description: String {
        var text = "\(type) id=\(lastEventID.debugDescription) data=\(data.debugDescription)"
        if let retry { text += " retry=\(retry)" }
        return text
    }
}
