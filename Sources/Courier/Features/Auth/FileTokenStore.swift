import Foundation

/// A ``TokenStore`` backed by one JSON file, for Linux, servers and command-line tools (Apple
/// apps should use `KeychainTokenStore`).
///
/// - The file is created with mode 0600 (owner read/write only) and never exists with wider
///   permissions: the new contents go to a temporary file opened with 0600 in the same
///   directory, are flushed with `fsync`, and replace the old file with `rename(2)`, which is
///   atomic — a crash leaves either the old tokens or the new ones, never half of each.
/// - Missing directories are created with mode 0700.
/// - A file found with group or world permissions (changed by someone else) is tightened to 0600
///   when read. Symbolic links at the file's path are refused (`O_NOFOLLOW`).
///
/// Anyone running as the same user can still read the file: use a dedicated account or an OS
/// secret store where that matters.
public struct FileTokenStore: TokenStore {
    /// The file holding the tokens.
    public let fileURL: URL

    /// The permission bits of the token file: owner read and write (0600).
    package static let fileMode: UInt16 = 0o600

    /// Creates a store for the file at `fileURL` (it need not exist yet).
    public init(fileURL: URL) {
        self.fileURL = fileURL
    }

    /// - Throws: ``TokenStoreError/fileSystem(operation:path:errno:)`` when the file exists but
    ///   cannot be read; ``TokenStoreError/corrupted(_:)`` when it is not a token file.
    public func read() throws -> AuthTokens? {
        guard let data = try TokenFile.contents(atPath: fileURL.path) else { return nil }
        return try AuthTokens(storedRepresentation: data)
    }

    /// - Throws: ``TokenStoreError/fileSystem(operation:path:errno:)`` when the directory or the
    ///   file cannot be written; the previous file is then untouched.
    public func write(_ tokens: AuthTokens) throws {
        try TokenFile.replace(atPath: fileURL.path, with: try tokens.storedRepresentation())
    }

    /// - Throws: ``TokenStoreError/fileSystem(operation:path:errno:)`` when the file exists and
    ///   cannot be removed.
    public func clear() throws {
        try TokenFile.remove(atPath: fileURL.path)
    }

    /// A lock on `<token file>.lock` next to the token file: processes sharing the file refresh
    /// one at a time (``TokenRefreshLock``).
    public var refreshLock: TokenRefreshLock? {
        TokenRefreshLock(fileURL: URL(fileURLWithPath: fileURL.path + ".lock"))
    }
}

/// The POSIX calls behind ``FileTokenStore`` (kept apart so `read`/`write` resolve to libc).
private enum TokenFile {
    static let maximumSize = 1 << 20
    static let mode = mode_t(FileTokenStore.fileMode)

    static func failure(_ operation: String, _ path: String, _ code: Int32 = errno) -> TokenStoreError {
        .fileSystem(operation: operation, path: path, errno: code)
    }

    static func contents(atPath path: String) throws -> Data? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        if fd < 0 {
            let code = errno
            if code == ENOENT { return nil }
            throw failure("open", path, code)
        }
        defer { _ = close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw failure("stat", path) }
        guard info.st_mode & 0o170000 == 0o100000 else {
            throw TokenStoreError.corrupted("\(path) is not a regular file")
        }
        if info.st_mode & 0o077 != 0, fchmod(fd, mode) != 0 {
            throw failure("chmod", path)
        }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw failure("read", path)
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
            guard data.count <= maximumSize else {
                throw TokenStoreError.corrupted("\(path) is larger than \(maximumSize) bytes")
            }
        }
        return data
    }

    static func replace(atPath path: String, with data: Data) throws {
        let directory = (path as NSString).deletingLastPathComponent
        if !directory.isEmpty { try makeDirectories(directory) }
        let name = (path as NSString).lastPathComponent
        let temporary = (directory.isEmpty ? "" : directory + "/") + ".\(name).\(UUID().uuidString).tmp"

        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard fd >= 0 else { throw failure("create", temporary) }
        var renamed = false
        defer { if !renamed { _ = unlink(temporary) } }
        do {
            // The umask may have removed bits, never added them; set exactly 0600 anyway.
            guard fchmod(fd, mode) == 0 else { throw failure("chmod", temporary) }
            try writeAll(data, to: fd, path: temporary)
            guard fsync(fd) == 0 else { throw failure("fsync", temporary) }
        } catch {
            _ = close(fd)
            throw error
        }
        guard close(fd) == 0 else { throw failure("close", temporary) }
        guard rename(temporary, path) == 0 else { throw failure("rename", path) }
        renamed = true
        // Make the rename itself durable; failure here does not undo the (already visible) write.
        let directoryFD = open(directory.isEmpty ? "." : directory, O_RDONLY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            _ = close(directoryFD)
        }
    }

    static func remove(atPath path: String) throws {
        guard unlink(path) == 0 else {
            let code = errno
            if code == ENOENT { return }
            throw failure("remove", path, code)
        }
    }

    private static func writeAll(_ data: Data, to fd: Int32, path: String) throws {
        try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < bytes.count {
                let written = write(fd, bytes.baseAddress.map { $0 + offset }, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw failure("write", path)
                }
                offset += written
            }
        }
    }

    /// `mkdir -p` with mode 0700 for every directory it creates.
    private static func makeDirectories(_ path: String) throws {
        if mkdir(path, 0o700) == 0 { return }
        let code = errno
        switch code {
        case EEXIST:
            return
        case ENOENT:
            let parent = (path as NSString).deletingLastPathComponent
            guard !parent.isEmpty, parent != path else { throw failure("mkdir", path, code) }
            try makeDirectories(parent)
            if mkdir(path, 0o700) != 0, errno != EEXIST { throw failure("mkdir", path) }
        default:
            throw failure("mkdir", path, code)
        }
    }
}

extension FileTokenStore {
    /// The token file, by its standardized path compared without case: on a case-insensitive
    /// file system (the default on Apple platforms) `tokens.Staging.json` and
    /// `tokens.staging.json` are one file, so two environments whose namespaces differ only in
    /// case are refused as sharing it, on every platform.
    public var storageIdentity: SessionStateIdentity? {
        let path = fileURL.standardizedFileURL.path
        return SessionStateIdentity(key: "token-file:\(path.lowercased())", label: "the token file \(path)")
    }
}
