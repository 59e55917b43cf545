import Foundation

/// Block observers added to one `NotificationCenter` and removed from that same center when the
/// value is released: ``AppLifecycleObserver``'s observations, in code every platform compiles
/// (a center other than `default` keeps an observer that is removed from `default` instead, and
/// goes on calling its block after its owner is gone).
final class NotificationObservers {
    private let center: NotificationCenter
    private let tokens: [any NSObjectProtocol]

    /// Observes each of `names` on `center`, calling `handler` on `queue` (on the posting thread
    /// when `nil`) with the name posted.
    init(
        _ names: [Notification.Name], on center: NotificationCenter, queue: OperationQueue?,
        handler: @escaping @Sendable (Notification.Name) -> Void
    ) {
        self.center = center
        tokens = names.map { name in
            center.addObserver(forName: name, object: nil, queue: queue) { _ in handler(name) }
        }
    }

    deinit {
        for token in tokens { center.removeObserver(token) }
    }
}
