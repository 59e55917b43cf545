import Foundation

// Courier's other public errors are `LocalizedError`s too, so `localizedDescription` shows their
// description instead of Foundation's generic "The operation couldn't be completed".

extension PinningConfigurationError: LocalizedError {
    /// The description (what is wrong with the pin configuration).
    public var errorDescription: String? { description }
}

extension PinningFailure: LocalizedError {
    /// The description (which host failed which check).
    public var errorDescription: String? { description }
}

extension SessionResetError: LocalizedError {
    /// The description (every participant that failed to reset).
    public var errorDescription: String? { description }
}

extension TokenStoreError: LocalizedError {
    /// The description (what the store could not do).
    public var errorDescription: String? { description }
}

extension DecodingFailure: LocalizedError {
    /// The description (what the server sent and where decoding failed).
    public var errorDescription: String? { description }
}

extension EmptyBodyError: LocalizedError {
    /// "empty body".
    public var errorDescription: String? { description }
}

extension ResponseCodingFailure: LocalizedError {
    /// The description (which coding could not be undone).
    public var errorDescription: String? { description }
}

/// `TokenRefreshRejection` already has an `errorDescription`: the token endpoint's
/// `error_description` (RFC 6749 §5.2), which is what `localizedDescription` shows.
extension TokenRefreshRejection: LocalizedError {}

extension TextDecodingError: LocalizedError {
    /// The description (the charset, and whether it is unknown or the bytes are invalid in it).
    public var errorDescription: String? { description }
}
