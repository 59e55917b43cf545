extension WebSocketClient {
    /// The app moved to the background: close with 1001 going away (RFC 6455 §7.4.1) and remember
    /// to reconnect on ``enterForeground()``. Does nothing when the session is not running.
    /// Platform-neutral; on iOS `AppLifecycleObserver` calls it.
    ///
    /// The intent to resume is recorded before the closing handshake, which takes a round trip (or
    /// the close timeout): an ``enterForeground()`` meanwhile reconnects once the close is done, and
    /// a ``close(code:reason:)`` meanwhile cancels the resume.
    ///
    /// A ``connect()`` (or ``enterForeground()``) still waiting for an earlier close to end starts
    /// nothing after this: the app is in the background.
    public func enterBackground() async {
        let connectWaited = stopCommand()
        if case .closed = state, !connectWaited { return }
        resumesOnForeground = true
        await shutDown(code: .goingAway, reason: Self.backgroundReason)
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
