import Foundation

// Like Courier's errors, the offline module's errors are `LocalizedError`s, so
// `localizedDescription` shows their description instead of a generic sentence.

extension SQLiteError: LocalizedError {
    /// The ``SQLiteError/description``.
    public var errorDescription: String? { description }
}

extension MutationQueueError: LocalizedError {
    /// The ``MutationQueueError/description``.
    public var errorDescription: String? { description }
}
