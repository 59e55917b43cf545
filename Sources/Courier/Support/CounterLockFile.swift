import Foundation

/// A small file of `UInt64` counters that processes sharing a folder (an app and its extensions in
/// an app group container) `flock(2)` around each change they make there: the counters say what
/// changed since a process last looked (a removal, a write), the lock keeps two changes from
/// interleaving. The file holds `count` little-endian `UInt64`s; a missing or shorter file counts
/// as zeros. The kernel drops a lock whose holder exits or is killed.
///
/// The lock is taken on the file the path names at that moment: a file deleted or replaced since it
/// was opened (an app's cleanup of files it does not know) is one that processes opening the path
/// later never lock, so it is opened again, and the holder is told that its counters start over.
///
/// Used by cookie and snapshot storages on their own queues, off Swift's cooperative pool: waiting
/// for the lock blocks such a queue only, for as long as another process takes to write a small file.
final class CounterLockFile: Sendable {
    /// The open file (`O_CLOEXEC`), kept open for the life of the storage state that holds it, and
    /// replaced when the path names another file.
    private let descriptor: Locked<Int32>
    /// Its path, for error messages.
    let path: String
    /// How many counters it holds.
    let count: Int

    private init(descriptor: Int32, path: String, count: Int) {
        self.descriptor = Locked(descriptor)
        self.path = path
        self.count = count
    }

    /// Opens (creating it and its folder) the file at `url`; `nil` when it cannot be opened (a
    /// folder that cannot be written: what it would share is then shared within this process only).
    /// The file and a folder it creates are its owner's alone, as the files it guards
    /// (``AtomicFile``): its name says whose they are (`alice.cookies.lock`).
    static func open(_ url: URL, count: Int) -> CounterLockFile? {
        try? FileManager.default.createDirectory(
            at: url.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: AtomicFile.folderAttributes)
        guard let descriptor = openFile(url.path) else { return nil }
        return CounterLockFile(descriptor: descriptor, path: url.path, count: count)
    }

    private static func openFile(_ path: String) -> Int32? {
        let descriptor = Foundation.open(path, O_RDWR | O_CREAT | O_CLOEXEC, AtomicFile.fileMode)
        return descriptor >= 0 ? descriptor : nil
    }

    /// Closes the file (and drops any lock held through it).
    func close() { descriptor.withLock { _ = Foundation.close($0) } }

    /// Runs `body` holding the lock, exclusive (to change what it guards) or shared (to read the
    /// counters). A lock the file system refuses (`ENOLCK`) runs `body` unlocked.
    ///
    /// `body` is told whether the file was opened again first (`replaced`): the counters it reads
    /// are then another file's, which may count from zero again, and what this process remembers
    /// of the old file's counters says nothing about them.
    func withLock<T>(exclusive: Bool, _ body: (_ replaced: Bool) throws -> T) rethrows -> T {
        let (locked, replaced) = descriptor.withLock { descriptor in
            var reopened = 0
            while true {
                while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) != 0, errno == EINTR {}
                // A path that keeps being replaced: the lock of the file last opened.
                guard reopened < 10, !pathNamesOpenFile(descriptor), let file = Self.openFile(path) else { break }
                flock(descriptor, LOCK_UN)
                _ = Foundation.close(descriptor)
                descriptor = file
                reopened += 1
            }
            return (descriptor, reopened > 0)
        }
        defer { flock(locked, LOCK_UN) }
        return try body(replaced)
    }

    /// Whether the path still names the file open at `descriptor`.
    private func pathNamesOpenFile(_ descriptor: Int32) -> Bool {
        var opened = stat()
        var named = stat()
        guard fstat(descriptor, &opened) == 0, stat(path, &named) == 0 else { return false }
        return opened.st_dev == named.st_dev && opened.st_ino == named.st_ino
    }

    /// The counters as the file holds them (zeros for a file written by no one yet).
    func read() -> [UInt64] {
        let descriptor = descriptor.current
        var bytes = [UInt8](repeating: 0, count: count * 8)
        let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        guard read == count * 8 else { return Array(repeating: 0, count: count) }
        return (0..<count).map { index in
            bytes[index * 8..<index * 8 + 8].reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
    }

    /// Writes `counters` (hold the exclusive lock).
    /// - Throws: `POSIXError` when the file refuses them.
    func write(_ counters: [UInt64]) throws {
        let descriptor = descriptor.current
        let bytes = counters.flatMap { value in (0..<8).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == bytes.count else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}
