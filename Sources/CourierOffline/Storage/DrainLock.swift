import Foundation

/// The lock that lets one queue at a time deliver from a database file, across processes (an app
/// and its extension, two app instances) and within one: an exclusive `flock(2)` on a file next to
/// the database (`<database>-drain.lock`). The kernel releases it when its holder exits or is
/// killed, so a crash never leaves the queue locked.
///
/// Taken without waiting (`LOCK_NB`): a queue that finds it held lets the holder deliver (the
/// holder reads every process's rows from the table) and tries again later.
final class DrainLock {
    private var descriptor: Int32
    private let path: String
    private(set) var isHeld = false

    /// Opens (creating when missing) the lock file.
    ///
    /// - Throws: ``SQLiteError`` (`SQLITE_CANTOPEN`) when the file cannot be opened for writing.
    init(databasePath: String) throws {
        path = databasePath + "-drain.lock"
        descriptor = try Self.openFile(path)
    }

    private static func openFile(_ path: String) throws -> Int32 {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw SQLiteError.cannotOpen("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        // Its owner's alone as the database is, also when an earlier version created it 0644.
        _ = fchmod(fd, 0o600)
        return fd
    }

    /// Whether the path still names the file this queue has open: a lock file deleted or replaced
    /// since it was opened is one that queues opening the path later never lock.
    private func pathNamesOpenFile() -> Bool {
        var opened = stat()
        var named = stat()
        guard fstat(descriptor, &opened) == 0, stat(path, &named) == 0 else { return false }
        return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino
    }

    deinit {
        close(descriptor)  // releases the lock with the descriptor
    }

    /// Takes the lock when no other queue holds it. Returns whether this queue holds it now.
    ///
    /// The lock is taken on the file the path names at that moment: when the file this queue
    /// opened was deleted or replaced since (a cleanup of unknown files), the lock on it would
    /// exclude no queue that opened the path later, so this queue opens the path again.
    ///
    /// - Throws: ``SQLiteError`` (`SQLITE_IOERR`) when `flock` fails for another reason than a
    ///   holder (the file system does not support locks), or the lock file keeps being replaced;
    ///   (`SQLITE_CANTOPEN`) when it cannot be opened again.
    func tryAcquire() throws -> Bool {
        if isHeld { return true }
        var reopened = 0
        while true {
            if flock(descriptor, LOCK_EX | LOCK_NB) == 0 {
                if pathNamesOpenFile() {
                    isHeld = true
                    return true
                }
                flock(descriptor, LOCK_UN)
                reopened += 1
                guard reopened <= 10 else { throw SQLiteError.ioFailure("\(path) keeps being replaced") }
                let fd = try Self.openFile(path)
                close(descriptor)
                descriptor = fd
                continue
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
