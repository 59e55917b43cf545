/// A subscription the app registers with ``WebSocketClient``: the message that subscribes and,
/// optionally, the one that unsubscribes. The client sends `subscribe` when the connection opens
/// and again, exactly once, after every reconnect, until ``WebSocketClient/unsubscribe(_:)``.
public struct Subscription: Sendable, Hashable, Identifiable {
    /// Identifies the subscription (a topic or channel name); registering the same id again
    /// replaces the earlier one (with the same `subscribe` message, it changes nothing on the wire).
    public var id: String
    /// Sent to subscribe.
    public var subscribe: WebSocketMessage
    /// Sent to unsubscribe while connected; nil sends nothing.
    public var unsubscribe: WebSocketMessage?

    /// Creates a subscription.
    public init(id: String, subscribe: WebSocketMessage, unsubscribe: WebSocketMessage? = nil) {
        self.id = id
        self.subscribe = subscribe
        self.unsubscribe = unsubscribe
    }
}
