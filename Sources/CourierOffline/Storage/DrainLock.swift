import Foundation

/// The lock that lets one queue at a time deliver from a database file, across processes (an app
/// and its extension, two app instances) and within one: an exclusive `flock(2)` on a file next to
/// the database (`<database>-drain.lock`). The kernel releases it when its holder exits or is
/// killed, so a crash never leaves the queue locked.
///
/// Taken without waiting (`LOCK_NB`): a queue that finds it held lets the holder deliver (the
/// holder reads every process's rows from the table) and tries again later.
final class DrainLock {
    private let descriptor: Int32
    private let path: String
    private(set) var isHeld = false

    /// Opens (creating when missing) the lock file.
    ///
    /// - Throws: ``SQLiteError`` (`SQLITE_CANTOPEN`) when the file cannot be opened for writing.
    init(databasePath: String) throws {
        path = databasePath + "-drain.lock"
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw SQLiteError.cannotOpen("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        descriptor = fd
    }

    deinit {
        close(descriptor)  // releases the lock with the descriptor
    }

    /// Takes the lock when no other queue holds it. Returns whether this queue holds it now.
    ///
    /// - Throws: ``SQLiteError`` (`SQLITE_IOERR`) when `flock` fails for another reason than a
    ///   holder (the file system does not support locks).
    func tryAcquire() throws -> Bool {
        if isHeld { return true }
        while true {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                isHeld = true
                return true
            }
            let error = errno
            if error == EINTR { continue }
            if error == EWOULDBLOCK || error == EAGAIN { return false }
            throw SQLiteError.ioFailure("cannot lock \(path): \(String(cString: strerror(error)))")
        }
    }

    /// Releases the lock (a no-op when not held).
    func release() {
        guard isHeld else { return }
        flock(descriptor, LOCK_UN)
        isHeld = false
    }
}
