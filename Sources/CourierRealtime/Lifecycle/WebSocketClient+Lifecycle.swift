extension WebSocketClient {
    /// The app moved to the background: close with 1001 going away (RFC 6455 §7.4.1) and remember
    /// to reconnect on ``enterForeground()``. Does nothing when the session is not running.
    /// Platform-neutral; on iOS `AppLifecycleObserver` calls it.
    public func enterBackground() async {
        if case .closed = state { return }
        await close(code: .goingAway, reason: Self.backgroundReason)
        resumesOnForeground = true
    }

    /// The app came back: reconnect if ``enterBackground()`` closed the session (the
    /// subscriptions go out again and a ``RealtimeEvent/reconnected`` follows).
    public func enterForeground() async {
        guard resumesOnForeground else { return }
        resumesOnForeground = false
        await connect()
    }

    static let backgroundReason = "app moved to the background"
}
