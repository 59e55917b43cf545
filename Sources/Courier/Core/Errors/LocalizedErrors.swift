import Foundation

/// An error whose `errorDescription` — what `localizedDescription` shows — is its `description`,
/// instead of Foundation's generic "The operation couldn't be completed". Courier's modules
/// conform their public errors to it, so each says what went wrong in its own words.
package protocol DescribedError: LocalizedError, CustomStringConvertible {}

extension DescribedError {
    /// The same text as `description`, so `localizedDescription` shows it.
    public var errorDescription: String? { description }
}

// Courier's other public errors are `LocalizedError`s too (the pinning errors: what is wrong with
// the configuration, which host failed which check; a session reset: every participant that failed;
// a token store: what it could not do; decoding: what the server sent and where it failed; a
// response coding: which coding could not be undone; text: the charset and what is wrong with it).

extension PinningConfigurationError: LocalizedError, DescribedError {}
extension PinningFailure: LocalizedError, DescribedError {}
extension SessionResetError: LocalizedError, DescribedError {}
extension TokenStoreError: LocalizedError, DescribedError {}
extension DecodingFailure: LocalizedError, DescribedError {}
extension EmptyBodyError: LocalizedError, DescribedError {}
extension ResponseCodingFailure: LocalizedError, DescribedError {}
extension TextDecodingError: LocalizedError, DescribedError {}

/// `TokenRefreshRejection` already has an `errorDescription`: the token endpoint's
/// `error_description` (RFC 6749 §5.2), which is what `localizedDescription` shows.
extension TokenRefreshRejection: LocalizedError {}
