import Foundation

/// A small file of `UInt64` counters that processes sharing a folder (an app and its extensions in
/// an app group container) `flock(2)` around each change they make there: the counters say what
/// changed since a process last looked (a removal, a write), the lock keeps two changes from
/// interleaving. The file holds `count` little-endian `UInt64`s; a missing or shorter file counts
/// as zeros. The kernel drops a lock whose holder exits or is killed.
///
/// Used by cookie and snapshot storages on their own queues, off Swift's cooperative pool: waiting
/// for the lock blocks such a queue only, for as long as another process takes to write a small file.
struct CounterLockFile: Sendable {
    /// The open file (`O_CLOEXEC`), kept open for the life of the storage state that holds it.
    let descriptor: Int32
    /// Its path, for error messages.
    let path: String
    /// How many counters it holds.
    let count: Int

    /// Opens (creating it and its folder) the file at `url`; `nil` when it cannot be opened (a
    /// folder that cannot be written: what it would share is then shared within this process only).
    static func open(_ url: URL, count: Int) -> CounterLockFile? {
        try? FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        let descriptor = Foundation.open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { return nil }
        return CounterLockFile(descriptor: descriptor, path: url.path, count: count)
    }

    /// Closes the file (and drops any lock held through it).
    func close() { _ = Foundation.close(descriptor) }

    /// Runs `body` holding the lock, exclusive (to change what it guards) or shared (to read the
    /// counters). A lock the file system refuses (`ENOLCK`) runs `body` unlocked.
    func withLock<T>(exclusive: Bool, _ body: () throws -> T) rethrows -> T {
        while flock(descriptor, exclusive ? LOCK_EX : LOCK_SH) != 0, errno == EINTR {}
        defer { flock(descriptor, LOCK_UN) }
        return try body()
    }

    /// The counters as the file holds them (zeros for a file written by no one yet).
    func read() -> [UInt64] {
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
        let bytes = counters.flatMap { value in (0..<8).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) } }
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == bytes.count else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }
}
