import Foundation

/// What processes sharing a cookie folder count for one account in its lock file,
/// `<account>.cookies.lock` (a ``CounterLockFile``): how many times its cookies were removed (a
/// sign-out) and how many times its cookie file changed. A process that sees another change count
/// than it last saw reads the cookie file again; a response to a request sent before a removal is
/// not stored.
struct CookieFileCounters: Sendable, Equatable {
    /// Removals of the account's cookies, by any process.
    var removals: UInt64 = 0
    /// Changes of the account's cookie file (writes and removals), by any process.
    var changes: UInt64 = 0
}

extension CounterLockFile {
    /// An account's lock file at `url`, or `nil` (see ``CounterLockFile/open(_:count:)``).
    static func cookies(_ url: URL) -> CounterLockFile? { open(url, count: 2) }

    /// The account's counters as the file holds them.
    func cookieCounters() -> CookieFileCounters {
        let values = read()
        return CookieFileCounters(removals: values[0], changes: values[1])
    }

    /// Writes the account's counters (hold the exclusive lock).
    /// - Throws: ``CookieStorageError/unwritable(path:reason:)``.
    func write(_ counters: CookieFileCounters) throws {
        do {
            try write([counters.removals, counters.changes])
        } catch {
            throw CookieStorageError.unwritable(path: path, reason: "\(error)")
        }
    }
}
