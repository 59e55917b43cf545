import Foundation

/// Whole-file writes that readers never see half done: the bytes go to a temporary file in the
/// same directory, which is then renamed over the destination (`rename(2)` replaces atomically
/// within one file system).
package enum AtomicFile {
    /// Prefix of temporary files; a directory scan may delete leftovers with it after a crash.
    package static let temporaryPrefix = ".tmp-"

    /// Writes `data` to `destination`, creating the directory when needed.
    /// - Throws: The `CocoaError` of the write, or `CocoaError(.fileWriteUnknown)` naming the
    ///   `rename(2)` error when the rename fails.
    package static func write(_ data: Data, to destination: URL) throws {
        let directory = destination.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = directory.appendingPathComponent(temporaryPrefix + UUID().uuidString)
        do {
            try data.write(to: temporary)
            try replace(destination, with: temporary)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// Renames `source` to `destination`, replacing an existing file atomically (`rename(2)`: both
    /// on one file system).
    /// - Throws: `CocoaError(.fileWriteUnknown)` naming `destination` and the `rename(2)` error
    ///   (e.g. "Is a directory", "Read-only file system", "Cross-device link").
    package static func replace(_ destination: URL, with source: URL) throws {
        guard rename(source.path, destination.path) == 0 else {
            let reason = String(cString: strerror(errno))
            throw CocoaError(
                .fileWriteUnknown,
                userInfo: [NSFilePathErrorKey: destination.path, NSLocalizedDescriptionKey: "rename(2) failed: \(reason)"])
        }
    }
}
