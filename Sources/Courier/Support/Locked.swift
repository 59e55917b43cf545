import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A value guarded by an `NSLock`: the small lock-protected box for shared mutable state that does
/// not deserve an actor (`Mutex` needs iOS 18, above Courier's floor).
///
/// `@unchecked Sendable` is sound because `value` is only read or written inside `withLock`, which
/// holds `lock` for the whole access, and `Value` itself is required to be `Sendable`.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with exclusive access to the value and returns its result.
    package func withLock<R>(_ body: (inout Value) throws -> R) rethrows -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// A copy of the current value.
    package var current: Value { withLock { $0 } }

    /// Replaces the value.
    package func set(_ newValue: Value) { withLock { $0 = newValue } }
}
