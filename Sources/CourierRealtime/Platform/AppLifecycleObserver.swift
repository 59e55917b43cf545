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
        tokens.append(
            center.addObserver(forName: UIApplication.didEnterBackgroundNotification, object: nil, queue: .main) { _ in
                changes.yield(true)
            })
        tokens.append(
            center.addObserver(forName: UIApplication.willEnterForegroundNotification, object: nil, queue: .main) { _ in
                changes.yield(false)
            })
    }

    deinit {
        // NotificationCenter removes block observers when the tokens are released; the explicit
        // removal keeps the intent visible.
        for token in tokens { NotificationCenter.default.removeObserver(token) }
        changes.finish()
        applier.cancel()
    }
}
#endif
