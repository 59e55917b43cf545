import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The checks a finished background download passes before it is moved into place — those of
/// foreground downloads: an accepted status, the announced length, the SHA-256 digest (the
/// complete length of a `206`'s `Content-Range`, and only a digest of the whole representation,
/// for a task resumed from resume data; a `206` of unknown complete length, `bytes a-b/*`, needs
/// that digest to be taken as the whole file).
enum BackgroundDownloadCheck {
    /// - Throws: ``DownloadError``: ``DownloadError/Reason/network(_:)`` for a status that carries
    ///   no file (only 200, 203 and 206 do: a 202's body is a status document, a 204 has none),
    ///   ``DownloadError/Reason/lengthMismatch(expected:received:)``,
    ///   ``DownloadError/Reason/digestMismatch(field:expected:actual:)``,
    ///   ``DownloadError/Reason/fileSystem(_:)`` when the file cannot be read.
    static func verify(_ file: URL, response: HTTPResponse) throws {
        guard Downloader<Request<Data>>.carriesFile(response.statusCode) else {
            throw DownloadError(.network(NetworkError(response: response)))
        }
        let size: Int64
        do {
            let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
            size = (attributes[.size] as? NSNumber)?.int64Value ?? 0
        } catch {
            throw DownloadError(.fileSystem("cannot read the downloaded file: \(error)"))
        }
        // A task resumed from resume data answers 206: the system joined the bytes it had with
        // this part, so the file is the whole representation — its length is the Content-Range's
        // complete length, and a Content-Digest (of this part's bytes only) says nothing about it.
        let isPart = response.statusCode == 206
        let expected: Int64?
        if isPart {
            guard !DownloadRules.isContentCoded(response.headers), let range = DownloadContentRange(response.headers),
                case .bytes(_, _, let complete) = range
            else {
                throw DownloadError(.network(.transport(URLError(.badServerResponse))))
            }
            // `bytes a-b/*` (RFC 9110 §14.4): the part's end is not the file's, and the system asks
            // no further. Only a digest of the whole representation proves the joined file whole.
            if complete == nil, DownloadDigest.expected(in: response.headers)?.scope != .representation {
                let reason =
                    "a 206 of unknown complete length (Content-Range \(response.headers["Content-Range"] ?? "")) "
                    + "without a digest of the whole file: its end is not proof of the file's"
                throw DownloadError(
                    .network(.transport(URLError(.badServerResponse, userInfo: [NSLocalizedDescriptionKey: reason]))))
            }
            expected = complete
        } else if !DownloadRules.isContentCoded(response.headers) {
            expected = response.headers["Content-Length"].flatMap { Int64($0.trimmingCharacters(in: .whitespaces)) }
        } else {
            expected = nil
        }
        if let expected, expected != size {
            throw DownloadError(.lengthMismatch(expected: expected, received: size))
        }
        guard let digest = DownloadDigest.expected(in: response.headers), !(isPart && digest.scope == .content) else { return }
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

    /// Moves `file` to `destination` (replacing it), creating its folder (0700, as the folders of
    /// a foreground download).
    /// - Throws: ``DownloadError/Reason/fileSystem(_:)``.
    static func move(_ file: URL, to destination: URL) throws {
        do {
            try FileManager.default.createDirectory(
                at: destination.deletingLastPathComponent(), withIntermediateDirectories: true,
                attributes: AtomicFile.folderAttributes)
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
