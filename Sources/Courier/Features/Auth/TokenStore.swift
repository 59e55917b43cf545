import Foundation

/// Where the user's ``AuthTokens`` live between launches.
///
/// Implementations: ``InMemoryTokenStore`` (tests, previews, sessions that must not persist),
/// ``FileTokenStore`` (Linux and server use: one file, mode 0600, replaced atomically), and
/// `KeychainTokenStore` on Apple platforms. Tokens belong in one of these — never in
/// `UserDefaults`, a URL query or a log.
///
/// Both tokens are read and written together, so a rotated refresh token (RFC 6749 §6) can
/// never be stored without the access token issued with it. A custom store keeps every field of
/// ``AuthTokens``, ``AuthTokens/grantID`` included: processes that share the store tell by it
/// another process's refresh from another sign-in. ``TokenManager`` serialises all access from
/// one process; implementations must still be safe to call from any thread.
public protocol TokenStore: Sendable {
    /// The stored tokens, or `nil` when nobody is signed in.
    ///
    /// - Throws: ``TokenStoreError`` when the storage cannot be read or holds something else.
    func read() throws -> AuthTokens?

    /// Replaces the stored tokens with `tokens`.
    ///
    /// - Throws: ``TokenStoreError`` when the storage cannot be written; the previous tokens are
    ///   then still in place.
    func write(_ tokens: AuthTokens) throws

    /// Removes the stored tokens; succeeds when there were none.
    ///
    /// - Throws: ``TokenStoreError`` when the storage cannot be changed.
    func clear() throws

    /// The storage this store reads and writes, so that two environments of one client cannot
    /// share it (``EnvironmentError/sharedSessionState(_:)``): two stores with the same identity
    /// share their tokens. `nil` (the default) leaves the store out of that check.
    var storageIdentity: SessionStateIdentity? { get }

    /// The lock processes that share this store take while one of them refreshes its tokens
    /// (``TokenRefreshLock``), or `nil` (the default) when refreshes are not coordinated across
    /// processes. ``FileTokenStore`` has one; ``sharingRefreshes(lockFile:waitLimit:)`` adds one
    /// to any store.
    var refreshLock: TokenRefreshLock? { get }
}

extension TokenStore {
    /// `nil`: the store is not checked for sharing between environments.
    public var storageIdentity: SessionStateIdentity? { nil }

    /// `nil`: no lock across processes.
    public var refreshLock: TokenRefreshLock? { nil }
}

/// Why a ``TokenStore`` failed. Messages never contain token values.
public enum TokenStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The storage holds data that is not a token set (for example a truncated file).
    case corrupted(String)
    /// A file-system call failed: the operation, the path and the POSIX `errno`.
    case fileSystem(operation: String, path: String, errno: Int32)
    /// A Keychain call failed with this `OSStatus`.
    case keychain(operation: String, status: Int32)
    /// Any other failure of a custom store, described without token values.
    case failed(String)

    public var description: String {
        switch self {
        case .corrupted(let reason):
            return "token store corrupted: \(reason)"
        case .fileSystem(let operation, let path, let code):
            return "token file \(operation) failed for \(path): \(String(cString: strerror(code))) (errno \(code))"
        case .keychain(let operation, let status):
            return "keychain \(operation) failed (OSStatus \(status))"
        case .failed(let reason):
            return "token store failed: \(reason)"
        }
    }
}
