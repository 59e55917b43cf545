#if canImport(UIKit) && !os(watchOS)
import UIKit

/// Thin iOS/tvOS adapter: forwards `UIApplication.didEnterBackgroundNotification` and
/// `willEnterForegroundNotification` to ``WebSocketClient/enterBackground()`` and
/// ``WebSocketClient/enterForeground()``. Keep it alive as long as the client; the logic lives in
/// the client and is tested on every platform.
@MainActor
public final class AppLifecycleObserver {
    /// The two observations, removed from the center they were added to when released.
    private let observers: NotificationObservers
    /// `true` for background, `false` for foreground, in the order the notifications came.
    private let changes: AsyncStream<Bool>.Continuation
    /// Applies the changes one after another (a task per notification could run them out of order).
    private let applier: Task<Void, Never>

    /// Starts observing on the main queue for `client`.
    public init(client: WebSocketClient, center: NotificationCenter = .default) {
        let (stream, changes) = AsyncStream.makeStream(of: Bool.self)
        self.changes = changes
        applier = Task {
            for await background in stream {
                if background { await client.enterBackground() } else { await client.enterForeground() }
            }
        }
        let background = UIApplication.didEnterBackgroundNotification
        observers = NotificationObservers(
            [background, UIApplication.willEnterForegroundNotification], on: center, queue: .main
        ) { name in
            changes.yield(name == background)
        }
    }

    deinit {
        // Releasing `observers` removes them from `center` (not from `NotificationCenter.default`).
        changes.finish()
        applier.cancel()
    }
}
#endif
