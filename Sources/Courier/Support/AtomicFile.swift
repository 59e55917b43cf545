import Foundation

/// Whole-file writes that readers never see half done: the bytes go to a temporary file in the
/// same directory, which is then renamed over the destination (`rename(2)` replaces atomically
/// within one file system).
///
/// What is written this way is the app's own state — cookie jars, cached responses, snapshots,
/// transfer records — so a file is readable by its owner alone (mode 0600, as `FileTokenStore`'s
/// token file), whatever the process's umask would allow.
package enum AtomicFile {
    /// Prefix of temporary files; a directory scan may delete leftovers with it after a crash.
    package static let temporaryPrefix = ".tmp-"

    /// The mode of every file written (owner read and write only).
    package static let fileMode: mode_t = 0o600

    /// The attributes of a folder Courier creates for such files: listable by its owner alone
    /// (0700), since the names can say whose they are (`alice%40example.com.cookies`). A folder
    /// that exists keeps its mode.
    package static var folderAttributes: [FileAttributeKey: Any] { [.posixPermissions: 0o700] }

    /// Makes the file at `url` its owner's alone (``fileMode``): for a file an earlier version
    /// wrote with the process's default mode (0644), read before it is written again. A file that
    /// cannot be changed (another user's, a file system without modes) is left as it is; the read
    /// reports what matters.
    package static func makePrivate(_ url: URL) {
        _ = chmod(url.path, fileMode)
    }

    /// Writes `data` to `destination`, creating the directory when needed.
    ///
    /// With `durable`, the bytes and then the rename are flushed to the storage device (`fsync(2)`
    /// of the file before the rename, then of its directory) before this returns, so that a power
    /// loss right after it leaves the new file, never an empty or a missing one. It blocks for the
    /// device's write (milliseconds): for a record that must survive (a registry of transfers, a
    /// cookie jar), written off the cooperative pool.
    /// - Throws: The `CocoaError` of the write, or `CocoaError(.fileWriteUnknown)` naming the
    ///   `rename(2)` or `fsync(2)` error when either fails.
    package static func write(_ data: Data, to destination: URL, durable: Bool = false) throws {
        let directory = destination.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true, attributes: folderAttributes)
        let temporary = directory.appendingPathComponent(temporaryPrefix + UUID().uuidString)
        do {
            try writeNewFile(data, to: temporary, synchronized: durable)
            try replace(destination, with: temporary)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        if durable { try synchronize(directory: directory) }
    }

    /// Writes `data` to a new file at `url` of mode ``fileMode``, flushed to the device before it
    /// is closed when `synchronized`.
    private static func writeNewFile(_ data: Data, to url: URL, synchronized: Bool) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, fileMode)
        guard descriptor >= 0 else { throw failure("open(2)", url) }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false)
        var writeError: (any Error)?
        do {
            try handle.write(contentsOf: data)
            if synchronized { try handle.synchronize() }
        } catch {
            writeError = error
        }
        do { try handle.close() } catch { writeError = writeError ?? error }  // the first error is the one reported
        if let writeError { throw writeError }
    }

    /// Flushes a directory's entries (a rename into it) to the device. A file system that cannot
    /// flush a directory (`EINVAL`) is taken as done.
    private static func synchronize(directory: URL) throws {
        let descriptor = open(directory.path, O_RDONLY)
        guard descriptor >= 0 else { throw failure("open(2)", directory) }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 || errno == EINVAL else { throw failure("fsync(2)", directory) }
    }

    /// `CocoaError(.fileWriteUnknown)` naming `path` and the system call's `errno`.
    private static func failure(_ call: String, _ url: URL) -> CocoaError {
        let reason = String(cString: strerror(errno))
        return CocoaError(
            .fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSLocalizedDescriptionKey: "\(call) failed: \(reason)"])
    }

    /// Renames `source` to `destination`, replacing an existing file atomically (`rename(2)`: both
    /// on one file system).
    /// - Throws: `CocoaError(.fileWriteUnknown)` naming `destination` and the `rename(2)` error
    ///   (e.g. "Is a directory", "Read-only file system", "Cross-device link").
    package static func replace(_ destination: URL, with source: URL) throws {
        guard rename(source.path, destination.path) == 0 else { throw failure("rename(2)", destination) }
    }
}
