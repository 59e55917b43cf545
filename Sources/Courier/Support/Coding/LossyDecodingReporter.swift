import Foundation

/// Collects the elements skipped by ``LossyArray`` during one or more
/// decoding operations, so a caller can log or surface them.
///
/// Install it in the decoder's `userInfo` under
/// ``Swift/CodingUserInfoKey/lossyDecodingReporter``:
///
/// ```swift
/// let reporter = LossyDecodingReporter()
/// let decoder = JSONDecoder()
/// decoder.userInfo[.lossyDecodingReporter] = reporter
/// let page = try decoder.decode(Page.self, from: data)
/// for skip in reporter.skips { print("skipped: \(skip)") }
/// ```
///
/// Every ``LossyArray`` decoded by that decoder appends one ``LossySkip``
/// per skipped element, in decoding order. The reporter is a reference type
/// and may be shared across threads and tasks.
public final class LossyDecodingReporter: @unchecked Sendable {
    // Safety of @unchecked Sendable: the only mutable state is `storage`,
    // which is private and read or written exclusively while holding `lock`
    // (an NSLock, itself Sendable); `lock` is an immutable `let`. No
    // reference to `storage` escapes: readers receive a copy of the array.
    private let lock = NSLock()
    private var storage: [LossySkip] = []

    /// Creates an empty reporter; install it in a decoder's `userInfo` under
    /// ``Swift/CodingUserInfoKey/lossyDecodingReporter``.
    public init() {}

    /// All skips reported so far, oldest first.
    public var skips: [LossySkip] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }

    /// Number of skips reported so far.
    package var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return storage.count
    }

    /// Appends a skip. Called by ``LossyArray``; may be called by custom
    /// lossy containers too.
    package func report(_ skip: LossySkip) {
        lock.lock()
        defer { lock.unlock() }
        storage.append(skip)
    }

    /// Returns all skips reported so far and clears the reporter.
    @discardableResult
    package func drain() -> [LossySkip] {
        lock.lock()
        defer { lock.unlock() }
        let drained = storage
        storage.removeAll()
        return drained
    }
}

extension CodingUserInfoKey {
    /// The `userInfo` key under which a decoder may carry a
    /// ``LossyDecodingReporter``. Raw value
    /// `"Courier.lossyDecodingReporter"`.
    public static let lossyDecodingReporter: CodingUserInfoKey = {
        // `CodingUserInfoKey.init?(rawValue:)` accepts every string; the
        // failable signature is historical.
        guard let key = CodingUserInfoKey(rawValue: "Courier.lossyDecodingReporter") else {
            preconditionFailure("CodingUserInfoKey rejected a constant raw value")
        }
        return key
    }()
}
