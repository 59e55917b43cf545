import Foundation

/// What names a folder whatever the path that leads there, so that objects sharing state per
/// folder in one process (cookie jars, snapshot stores) find each other's.
package enum FolderIdentity {
    /// The folder's device and inode numbers, the folder created first when missing: a symbolic
    /// link, `..` or another letter case on a case-insensitive disk (APFS and HFS+ by default)
    /// leads to the same key. The standardized path when the folder can neither be created nor
    /// examined (its files cannot be read or written either, and each call says so).
    package static func key(of url: URL) -> String {
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        var info = stat()
        guard stat(url.path, &info) == 0 else { return "path:" + url.standardizedFileURL.path }
        return "inode:\(info.st_dev):\(info.st_ino)"
    }
}

/// One value per folder in this process, held weakly: the value of a folder no one holds any more
/// is dropped.
package final class FolderRegistry<Value: AnyObject & Sendable>: Sendable {
    private final class Reference: @unchecked Sendable {
        // @unchecked: read and written only under `references`' lock.
        weak var value: Value?
    }

    private let references = Locked<[String: Reference]>([:])

    package init() {}

    /// The value of the folder at `url` (see ``FolderIdentity/key(of:)``), made by `make` when the
    /// folder has none yet.
    package func value(for url: URL, make: () -> Value) -> Value {
        let key = FolderIdentity.key(of: url)
        return references.withLock { references in
            if let value = references[key]?.value { return value }
            references = references.filter { $0.value.value != nil }
            let value = make()
            let reference = Reference()
            reference.value = value
            references[key] = reference
            return value
        }
    }
}
