import Foundation

/// What names a folder whatever the path that leads there, so that objects sharing state per
/// folder in one process (cookie jars, snapshot stores) find each other's.
package enum FolderIdentity {
    /// The folder's device and inode numbers, the folder created first when missing: a symbolic
    /// link, `..` or another letter case on a case-insensitive disk (APFS and HFS+ by default)
    /// leads to the same key. The standardized path when the folder can neither be created nor
    /// examined (its files cannot be read or written either, and each call says so). A folder it
    /// creates is listable by its owner alone, as ``AtomicFile`` makes the folders of its files.
    package static func key(of url: URL) -> String {
        try? FileManager.default.createDirectory(
            at: url, withIntermediateDirectories: true, attributes: AtomicFile.folderAttributes)
        return existingKey(of: url) ?? "path:" + url.standardizedFileURL.path
    }

    /// The device and inode key of the folder at `url` as it is now, without creating it; `nil`
    /// when nothing can be examined there.
    static func existingKey(of url: URL) -> String? {
        var info = stat()
        guard stat(url.path, &info) == 0 else { return nil }
        return "inode:\(info.st_dev):\(info.st_ino)"
    }
}

/// One value per folder in this process, held weakly: the value of a folder no one holds any more
/// is dropped.
package final class FolderRegistry<Value: AnyObject & Sendable>: Sendable {
    private final class Reference: @unchecked Sendable {
        // @unchecked: read and written only under `references`' lock.
        weak var value: Value?
        /// The path the value was made for.
        var url: URL?
    }

    private let references = Locked<[String: Reference]>([:])

    package init() {}

    /// The value of the folder at `url` (see ``FolderIdentity/key(of:)``), made by `make` when the
    /// folder has none yet.
    package func value(for url: URL, make: () -> Value) -> Value {
        let key = FolderIdentity.key(of: url)
        return references.withLock { references in
            // A folder deleted while its value lives on may leave its inode number to a new folder
            // elsewhere: the value is that folder's only while the path it was made for still
            // leads to the same folder (one `stat(2)`, under the lock so that two callers never
            // make two values for one folder).
            if let reference = references[key], let value = reference.value, let made = reference.url,
                (FolderIdentity.existingKey(of: made) ?? "path:" + made.standardizedFileURL.path) == key
            {
                return value
            }
            references = references.filter { $0.value.value != nil && $0.key != key }
            let value = make()
            let reference = Reference()
            reference.value = value
            reference.url = url
            references[key] = reference
            return value
        }
    }
}
