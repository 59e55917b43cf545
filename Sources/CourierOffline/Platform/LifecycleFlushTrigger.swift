import Foundation
#if canImport(UIKit) && !os(watchOS)
import UIKit
#endif

/// Flushes a ``MutationQueue`` each time a notification is posted — by default, on Apple
/// platforms with UIKit, `UIApplication.willEnterForegroundNotification` (the app returns to the
/// foreground, a good moment to deliver what piled up in the background).
///
/// Keep the trigger alive as long as it should work; it stops observing when deallocated.
public final class LifecycleFlushTrigger: @unchecked Sendable {
    // @unchecked: `token` is immutable after init and only used to remove the observer in deinit.
    private let token: any NSObjectProtocol
    private let center: NotificationCenter

    /// Observes `name` on `center` and flushes the queue (as ``MutationQueue/flush()`` does) for each post.
    public init(queue: MutationQueue, notification name: Notification.Name, center: NotificationCenter = .default) {
        self.center = center
        token = center.addObserver(forName: name, object: nil, queue: nil) { _ in
            // A storage failure is the queue's state (`storageFailure`, an event), not the trigger's.
            Task { await queue.requestDrain(ignoringBackoff: true) }
        }
    }

    #if canImport(UIKit) && !os(watchOS)
    /// Flushes `queue` whenever the app will enter the foreground.
    @MainActor
    public convenience init(foregroundFlushing queue: MutationQueue) {
        self.init(queue: queue, notification: UIApplication.willEnterForegroundNotification)
    }
    #endif

    deinit { center.removeObserver(token) }
}
