import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The checks a finished background download passes before it is moved into place — those of
/// foreground downloads: an accepted status, the announced length, the SHA-256 digest.
enum BackgroundDownloadCheck {
    /// - Throws: ``DownloadError``: ``DownloadError/Reason/network(_:)`` for a non-2xx status,
    ///   ``DownloadError/Reason/lengthMismatch(expected:received:)``,
    ///   ``DownloadError/Reason/digestMismatch(field:expected:actual:)``,
    ///   ``DownloadError/Reason/fileSystem(_:)`` when the file cannot be read.
    static func verify(_ file: URL, response: HTTPResponse) throws {
        guard (200..<300).contains(response.statusCode) else {
            throw DownloadError(.network(NetworkError(response: response)))
        }
        let size: Int64
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
        } catch {
            throw DownloadError(.fileSystem("cannot read the downloaded file: \(error)"))
        }
        if !DownloadRules.isContentCoded(response.headers),
            let announced = response.headers["Content-Length"].flatMap({ Int64($0.trimmingCharacters(in: .whitespaces)) }),
            announced != size
        {
            throw DownloadError(.lengthMismatch(expected: announced, received: size))
        }
        guard let digest = DownloadDigest.expected(in: response.headers) else { return }
        let actual: [UInt8]
        do { actual = try sha256(of: file) } catch {
            throw DownloadError(.fileSystem("cannot read the downloaded file: \(error)"))
        }
        guard actual == digest.sha256 else {
            throw DownloadError(
                .digestMismatch(
                    field: digest.field, expected: DownloadDigest.hex(digest.sha256), actual: DownloadDigest.hex(actual)))
        }
    }

    /// Moves `file` to `destination` (replacing it), creating its folder.
    /// - Throws: ``DownloadError/Reason/fileSystem(_:)``.
    static func move(_ file: URL, to destination: URL) throws {
        do {
            try FileManager.default.createDirectory(
                at: destination.deletingLastPathComponent(), withIntermediateDirectories: true)
            if rename(file.path, destination.path) == 0 { return }
            let code = errno
            if code == EXDEV {
                // Another volume: copy next to the destination, then rename over it (atomic there).
                let temporary = destination.deletingLastPathComponent()
                    .appendingPathComponent(AtomicFile.temporaryPrefix + UUID().uuidString)
                try FileManager.default.copyItem(at: file, to: temporary)
                guard rename(temporary.path, destination.path) == 0 else {
                    try? FileManager.default.removeItem(at: temporary)
                    throw CocoaError(.fileWriteUnknown)
                }
                try? FileManager.default.removeItem(at: file)
                return
            }
            throw CocoaError(
                .fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "rename(2) failed: \(String(cString: strerror(code)))"])
        } catch {
            throw DownloadError(.fileSystem("cannot move the file to \(destination.path): \(error)"))
        }
    }

    private static func sha256(of file: URL) throws -> [UInt8] {
        let reader = try FileHandle(forReadingFrom: file)
        defer { try? reader.close() }
        var hasher = SHA256()
        while let piece = try reader.read(upToCount: 1 << 20), !piece.isEmpty { hasher.update(piece) }
        return hasher.finalize()
    }
}
