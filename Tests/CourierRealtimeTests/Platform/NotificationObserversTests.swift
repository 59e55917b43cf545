import Foundation
import Testing
import Courier
@testable import CourierRealtime

/// `AppLifecycleObserver`'s observations (its UIKit half compiles on Apple only; the part that
/// adds and removes the observers is tested here on every platform).
@Suite("AppLifecycleObserver's observers: removed from the center they were added to")
struct NotificationObserversTests {
    private static let background = Notification.Name("NotificationObserversTests.background")
    private static let foreground = Notification.Name("NotificationObserversTests.foreground")

    @Test("a released observer of a private center receives nothing more and leaves no observer behind")
    func releasedObserverOfAPrivateCenterIsRemovedFromIt() {
        let center = NotificationCenter()
        let received = Locked<[Notification.Name]>([])
        /// Captured by the handler: alive only as long as the center holds the handler.
        final class Witness: Sendable {}
        weak var witness: Witness?
        var observers: NotificationObservers?
        do {
            let captured = Witness()
            witness = captured
            observers = NotificationObservers([Self.background, Self.foreground], on: center, queue: nil) { name in
                _ = captured
                received.withLock { $0.append(name) }
            }
        }
        center.post(name: Self.background, object: nil)
        center.post(name: Self.foreground, object: nil)
        #expect(received.withLock { $0 } == [Self.background, Self.foreground])
        #expect(observers != nil)

        observers = nil
        center.post(name: Self.background, object: nil)
        center.post(name: Self.foreground, object: nil)
        #expect(received.withLock { $0 } == [Self.background, Self.foreground], "a released observer still received")
        #expect(witness == nil, "the center still holds the released observer's block")
    }
}
