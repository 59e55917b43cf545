import Foundation

/// What processes sharing a cookie folder (an app and its extensions in an app group container)
/// count for one account, in `<account>.cookies.lock`: how many times its cookies were removed (a
/// sign-out) and how many times its cookie file changed. A process that sees another count than
/// it last saw reads the cookie file again; a response to a request sent before a removal is not
/// stored. 16 bytes, two little-endian `UInt64`s; a missing or shorter file counts as zeros.
struct CookieFileCounters: Sendable, Equatable {
    /// Removals of the account's cookies, by any process.
    var removals: UInt64 = 0
    /// Changes of the account's cookie file (writes and removals), by any process.
    var changes: UInt64 = 0
}

/// One account's open lock file: `flock(2)` around each read-change-write of its cookie file, so
/// two processes never write over each other's cookies; it also holds their
/// ``CookieFileCounters``. The kernel drops a lock whose holder exits or is killed.
///
/// Used by ``PersistentCookieStorage`` on its own queue, off Swift's cooperative pool: waiting for
/// the lock blocks that queue only, for as long as another process takes to write a small file.
struct CookieLockFile: Sendable {
    /// The open file (`O_CLOEXEC`), kept open for the process's life.
    let descriptor: Int32
    /// Its path, for error messages.
    let path: String

    /// Opens (creating it) the lock file at `url`; `nil` when it cannot be opened (a folder that
    /// cannot be written: the account's cookies are then shared within this process only).
    static func open(_ url: URL) -> CookieLockFile? {
        let descriptor = Foundation.open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        return CookieLockFile(descriptor: descriptor, path: url.path)
    }

    /// Runs `body` holding the lock, exclusive (to change the cookie file) or shared (to read the
    /// counters). A lock the file system refuses (`ENOLCK`) runs `body` unlocked.
    func withLock<T>(exclusive: Bool, _ body: () throws -> T) rethrows -> T {
        while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) != 0, errno == EINTR {}
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    /// The counters as the file holds them.
    func read() -> CookieFileCounters {
        var bytes = [UInt8](repeating: 0, count: 16)
        let count = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, 16, 0) }
        guard count == 16 else { return CookieFileCounters() }
        func value(at offset: Int) -> UInt64 {
            bytes[offset..<offset + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        return CookieFileCounters(removals: value(at: 0), changes: value(at: 8))
    }

    /// Writes `counters` (hold the exclusive lock).
    /// - Throws: ``CookieStorageError/unwritable(path:reason:)``.
    func write(_ counters: CookieFileCounters) throws {
        let bytes = [counters.removals, counters.changes].flatMap { value in
            (0..<8).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, 16, 0) }
        guard written == 16 else {
            throw CookieStorageError.unwritable(path: path, reason: String(cString: strerror(errno)))
        }
    }
}
