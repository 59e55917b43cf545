import Foundation

/// The lock that lets one process at a time refresh the tokens of a ``TokenStore`` that several
/// processes share (an app and its extensions), so that a refresh token is never spent twice: an
/// exclusive `flock(2)` on a lock file. The kernel releases it when its holder exits or is killed,
/// so a crash never leaves it held.
///
/// ``TokenManager`` takes it before it sends a refresh request and lets it go once the new tokens
/// are stored. Holding it, the manager reads the store again first: when another process
/// refreshed the same sign-in since (the same ``AuthTokens/grantID``), its tokens are used and
/// nothing is sent. With refresh token rotation (RFC 6749 §6) — and a server that revokes a whole
/// sign-in when a spent refresh token comes back (RFC 9700 §4.14.2) — two processes refreshing at
/// once would otherwise sign the user out.
///
/// ``FileTokenStore`` has one (`<token file>.lock`); give another store one with
/// ``TokenStore/sharingRefreshes(lockFile:waitLimit:)``. On iOS, put the file in the app group's container the
/// app and its extensions share, and run calls that may refresh inside a background task: a process
/// suspended while it holds a lock in a shared container is terminated by the system.
///
/// Waiting never blocks a thread: the lock is tried every 10 ms (`LOCK_NB`) until it is free or
/// ``waitLimit`` has passed; then — or when the lock file cannot be opened — the refresh goes
/// ahead without it, as it would without a lock.
public final class TokenRefreshLock: Sendable {
    /// The lock file (created with mode 0600 when missing; its folder must exist).
    public let fileURL: URL
    /// How long a refresh waits for another process's: 10 s by default — far longer than a
    /// refresh takes, and short enough that a call with the default 30 s deadline still gets its
    /// token when the holder is stuck.
    public let waitLimit: Duration

    /// Creates a lock on the file at `fileURL`.
    public init(fileURL: URL, waitLimit: Duration = .seconds(10)) {
        self.fileURL = fileURL
        self.waitLimit = waitLimit
    }

    /// The lock, held until ``release()``.
    package struct Held: Sendable {
        fileprivate let descriptor: Int32

        /// Lets the lock go (closing the descriptor releases the `flock`).
        package func release() {
            _ = close(descriptor)
        }
    }

    /// Takes the lock, polling every 10 ms for at most ``waitLimit``; `nil` when it could not be
    /// taken in that time, the file cannot be opened or locked, or the calling task is cancelled.
    package func acquire() async -> Held? {
        let descriptor = open(fileURL.path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { return nil }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: waitLimit)
        while true {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 { return Held(descriptor: descriptor) }
            let code = errno
            if code == EINTR { continue }
            guard code == EWOULDBLOCK || code == EAGAIN, clock.now < deadline else { break }
            do {
                try await Task.sleep(for: .milliseconds(10))
            } catch {
                break
            }
        }
        _ = close(descriptor)
        return nil
    }
}

extension TokenStore {
    /// This store, with a ``TokenRefreshLock`` on `lockFile`: processes that share the store (an app
    /// and its extensions, each with its own ``TokenManager``) refresh one at a time, and a
    /// process that waited uses the other's new tokens instead of spending the same refresh token
    /// again.
    ///
    /// The article "Auth and refresh", section "Sharing a session with app extensions", shows it
    /// on a Keychain store in an app group.
    public func sharingRefreshes(lockFile: URL, waitLimit: Duration = .seconds(10)) -> some TokenStore {
        RefreshSharingTokenStore(base: self, lock: TokenRefreshLock(fileURL: lockFile, waitLimit: waitLimit))
    }
}

/// A store with a refresh lock added (``TokenStore/sharingRefreshes(lockFile:waitLimit:)``).
private struct RefreshSharingTokenStore<Base: TokenStore>: TokenStore {
    let base: Base
    let lock: TokenRefreshLock

    func read() throws -> AuthTokens? { try base.read() }
    func write(_ tokens: AuthTokens) throws { try base.write(tokens) }
    func clear() throws { try base.clear() }
    var storageIdentity: SessionStateIdentity? { base.storageIdentity }
    var refreshLock: TokenRefreshLock? { lock }
}
