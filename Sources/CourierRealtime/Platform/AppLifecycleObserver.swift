#if canImport(UIKit) && !os(watchOS)
import UIKit

/// Thin iOS/tvOS adapter: forwards `UIApplication.didEnterBackgroundNotification` and
/// `willEnterForegroundNotification` to ``WebSocketClient/enterBackground()`` and
/// ``WebSocketClient/enterForeground()``. Keep it alive as long as the client; the logic lives in
/// the client and is tested on every platform.
@MainActor
public final class AppLifecycleObserver {
    // Written only in init, read only in deinit: no concurrent access.
    private nonisolated(unsafe) var tokens: [NSObjectProtocol] = []

    /// Starts observing on the main queue for `client`.
    public init(client: WebSocketClient, center: NotificationCenter = .default) {
        tokens.append(
            center.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: .main) { _ in
                Task { await client.enterBackground() }
            })
        tokens.append(
            center.addObserver(forName: UIApplication.willEnterForegroundNotification, object: nil, queue: .main) { _ in
                Task { await client.enterForeground() }
            })
    }

    deinit {
        // NotificationCenter removes block observers when the tokens are released; the explicit
        // removal keeps the intent visible.
        for token in tokens { NotificationCenter.default.removeObserver(token) }
    }
}
#endif
