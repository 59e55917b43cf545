import Courier
import Foundation

/// The bytes of a download while it is under way: a file in a Courier-owned folder next to the
/// destination (`.courier-downloads/`, so the final move is a `rename(2)` within one volume:
/// atomic, never a half-written destination). Written with `FileHandle` in the order the chunks
/// arrive; memory use does not depend on the file's size.
///
/// One download at a time: the file is held with an exclusive `flock(2)` from its opening to its
/// move into place, so a second download started from the same resume data (in this process or
/// another) fails at once with ``inUseError(_:)`` instead of truncating and writing the same file
/// (a file mixing two versions of the body, reported as a success).
///
/// Not thread-safe: one download owns it and awaits each call, which runs on its
/// ``DownloadFileQueue``, so calls never overlap (hence `@unchecked Sendable`).
final class PartialDownloadFile: @unchecked Sendable {
    /// Name of the folder that holds partial files, next to each destination.
    static let folderName = ".courier-downloads"

    let url: URL
    private var handle: FileHandle?
    /// Bytes in the file (the next write goes here).
    private(set) var length: Int64

    /// Opens `url` (creating it and its folder when needed) and cuts it to `length` bytes, or to
    /// its current size when that is shorter (bytes that were never written cannot be trusted).
    ///
    /// The file is its owner's alone (``AtomicFile/fileMode``), also one an earlier version left
    /// readable by others: it becomes the destination as it is.
    init(url: URL, keeping length: Int64) throws {
        self.url = url
        let manager = FileManager.default
        try Self.inFolder(of: url) {
            manager.fileExists(atPath: url.path)
                || manager.createFile(
                    atPath: url.path, contents: nil, attributes: [.posixPermissions: Int(AtomicFile.fileMode)])
        }
        let handle = try FileHandle(forUpdating: url)
        try Self.lock(handle, url)
        // A file system without modes refuses nothing else for it.
        _ = fchmod(handle.fileDescriptor, AtomicFile.fileMode)
        self.handle = handle
        let size = Int64(try handle.seekToEnd())
        self.length = max(0, min(length, size))
        try handle.truncate(atOffset: UInt64(self.length))
        try handle.seek(toOffset: UInt64(self.length))
    }

    /// A new partial file for a download to `destination`; first deletes the folder's stale
    /// partial files (see `sweepStale(in:now:)`).
    static func make(for destination: URL) throws -> PartialDownloadFile {
        let folder = destination.deletingLastPathComponent().appendingPathComponent(folderName, isDirectory: true)
        sweepStale(in: folder)
        return try PartialDownloadFile(url: folder.appendingPathComponent(UUID().uuidString + ".partial"), keeping: 0)
    }

    /// The partial file of `resume`, moved next to `destination` first when it lives elsewhere
    /// (a resume to another folder); `nil` when it is gone.
    static func reopen(_ resume: DownloadResumeData, for destination: URL) throws -> PartialDownloadFile? {
        let manager = FileManager.default
        guard manager.fileExists(atPath: resume.partialFileURL.path) else { return nil }
        let folder = destination.deletingLastPathComponent().appendingPathComponent(folderName, isDirectory: true)
        var url = resume.partialFileURL
        if url.deletingLastPathComponent().standardizedFileURL.path != folder.standardizedFileURL.path {
            // Not moved from under a download that is writing it (the lock is dropped again before
            // the file is opened at its new place, where it is taken for good).
            let probe = try FileHandle(forReadingFrom: url)
            try lock(probe, url)
            _ = Result { try probe.close() }  // only read the lock
            let moved = folder.appendingPathComponent(UUID().uuidString + ".partial")
            let move = {
                try manager.createDirectory(
                    at: folder, withIntermediateDirectories: true, attributes: AtomicFile.folderAttributes)
                try manager.moveItem(at: url, to: moved)
            }
            // Once more when another download removed the folder as it emptied it in between.
            do { try move() } catch { try move() }
            removeFolderIfEmpty(url.deletingLastPathComponent())
            url = moved
        }
        return try PartialDownloadFile(url: url, keeping: resume.offset)
    }

    /// Takes the exclusive lock on `handle`'s file without waiting; closes `handle` and throws
    /// ``inUseError(_:)`` when another download holds it.
    private static func lock(_ handle: FileHandle, _ url: URL) throws {
        guard flock(handle.fileDescriptor, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            _ = Result { try handle.close() }  // nothing was written through it
            if code == EWOULDBLOCK { throw inUseError(url) }
            throw CocoaError(
                .fileLocking,
                userInfo: [
                    NSFilePathErrorKey: url.path,
                    NSLocalizedDescriptionKey: "flock(2) failed: \(String(cString: strerror(code)))",
                ])
        }
    }

    /// The error for a partial file another download is writing: the same resume data used twice.
    static func inUseError(_ url: URL) -> CocoaError {
        CocoaError(
            .fileLocking,
            userInfo: [
                NSFilePathErrorKey: url.path,
                NSLocalizedDescriptionKey:
                    "the partial file \(url.lastPathComponent) is being written by another download "
                    + "(the same resume data was used twice)",
            ])
    }

    /// Appends `chunk`.
    func append(_ chunk: Data) throws {
        guard let handle else { throw CocoaError(.fileWriteUnknown) }
        try handle.write(contentsOf: chunk)
        length += Int64(chunk.count)
    }

    /// Drops every byte (a restart from zero).
    func discardContents() throws {
        guard let handle else { throw CocoaError(.fileWriteUnknown) }
        try handle.truncate(atOffset: 0)
        try handle.seek(toOffset: 0)
        length = 0
    }

    /// Flushes the file to storage (`fsync(2)`) and closes it; later writes fail.
    ///
    /// - Throws: The first failure of the flush or the close: the bytes may not all be on storage,
    ///   so the file must not be moved into place or offered for a resume.
    func close() throws {
        guard let handle else { return }
        self.handle = nil
        let flushed = Result { try handle.synchronize() }
        let closed = Result { try handle.close() }
        try flushed.get()
        try closed.get()
    }

    /// Closes the file without flushing it, for a file about to be deleted.
    private func abandon() {
        guard let handle else { return }
        self.handle = nil
        _ = Result { try handle.close() }  // the file is deleted next: a failed close loses nothing
    }

    /// Closes the file and renames it over `destination` (replacing an existing file atomically,
    /// `rename(2)`); the folder is removed when nothing else is in it.
    ///
    /// - Throws: A failed flush or close (nothing is moved), a failed rename.
    func moveIntoPlace(at destination: URL) throws {
        guard let handle else { throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path]) }
        try handle.synchronize()
        try FileManager.default.createDirectory(
            at: destination.deletingLastPathComponent(), withIntermediateDirectories: true,
            attributes: AtomicFile.folderAttributes)
        // Renamed while the lock is held: no other download can open the file between its last
        // write and the move, and then write into what became the destination.
        try AtomicFile.replace(destination, with: url)
        self.handle = nil
        // Every byte is on storage (synchronized above) and the file is in place: a failing close
        // cannot lose any of it.
        _ = Result { try handle.close() }
        Self.removeFolderIfEmpty(url.deletingLastPathComponent())
    }

    /// Closes and deletes the file (and its folder when empty).
    func remove() {
        abandon()
        try? FileManager.default.removeItem(at: url)
        Self.removeFolderIfEmpty(url.deletingLastPathComponent())
    }

    /// The SHA-256 of the file's bytes from `offset` to its end (the whole file by default), read
    /// back in 1 MiB pieces.
    func sha256(from offset: Int64 = 0) throws -> [UInt8] {
        let reader = try FileHandle(forReadingFrom: url)
        defer { try? reader.close() }
        if offset > 0 { try reader.seek(toOffset: UInt64(offset)) }
        var hasher = SHA256()
        while let piece = try reader.read(upToCount: 1 << 20), !piece.isEmpty {
            hasher.update(piece)
        }
        return hasher.finalize()
    }

    /// Removes `folder` when it is a `.courier-downloads` folder with nothing in it.
    /// Partial files left untouched this long (seven days, in seconds) are deleted when a new
    /// download starts in the same folder: the app lost their resume value (a crash before it was
    /// persisted, or it was never kept), or it is too old to trust the server's validator.
    static let staleAge: TimeInterval = 7 * 24 * 3600

    /// Deletes the `.partial` files in `folder` last modified more than `staleAge` before `now`.
    static func sweepStale(in folder: URL, now: Date = Date()) {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: folder.path) else { return }
        for name in names where name.hasSuffix(".partial") {
            let path = folder.appendingPathComponent(name).path
            guard let modified = (try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                now.timeIntervalSince(modified) > staleAge
            else { continue }
            try? manager.removeItem(atPath: path)
        }
    }

    /// Removes `folder` when it is a `.courier-downloads` folder with nothing in it: `rmdir(2)`,
    /// which refuses a folder that is not empty — another download may have just created its
    /// partial file there (a listing followed by a recursive removal deleted it under that
    /// download). A folder that is not empty or already gone is left as it is.
    static func removeFolderIfEmpty(_ folder: URL) {
        guard folder.lastPathComponent == folderName else { return }
        _ = rmdir(folder.path)
    }

    /// Creates the folder of `url` and runs `create`, which returns whether the item exists now;
    /// runs both again (up to three times in all) when another download removed the folder as it
    /// emptied it in between.
    ///
    /// - Throws: The folder's creation error; `CocoaError(.fileWriteUnknown)` when `create` never
    ///   succeeded.
    private static func inFolder(of url: URL, _ create: () -> Bool) throws {
        for _ in 0..<3 {
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true, attributes: AtomicFile.folderAttributes)
            if create() { return }
        }
        throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path])
    }
}
