import Courier
import Foundation

/// What a download needs to continue where it stopped: the URL, how many bytes are already on
/// disk, the representation's strong validator and where those bytes are kept. URLSession calls
/// this "resume data"; unlike URLSession's opaque blob it is a plain `Codable` value that can be
/// persisted (a database row, a JSON file) and works the same on Linux, where URLSession has no
/// resume data at all.
///
/// A failed or cancelled ``DownloadTask`` hands it out in ``DownloadError/resumeData`` when the
/// bytes received so far can be reused: the response carried a strong validator (RFC 9110
/// §8.8.1) and was not content-coded. Pass it to
/// ``Courier/APIClient/download(_:to:resumingFrom:idleTimeout:)`` to send `Range: bytes=<offset>-` with `If-Range:
/// <validator>` (RFC 9110 §14.2, §13.1.5); if the server's file changed meanwhile it answers
/// with the whole new file and the download starts from zero.
///
/// The partial bytes stay in ``partialFileURL`` (a hidden `.courier-downloads` folder next to the
/// destination) until the download is resumed and completes; call ``removePartialFile()`` when
/// you will not resume.
public struct DownloadResumeData: Sendable, Hashable, Codable {
    /// The URL of the request that was interrupted, after the client built it (base URL, path,
    /// query). A resume for another URL starts from zero.
    public let url: URL
    /// Bytes of the representation already in ``partialFileURL`` (the next byte to ask for).
    public let offset: Int64
    /// The strong validator the partial bytes belong to, exactly as the server sent it: an
    /// entity tag with its quotes (`"abc"`), or a `Last-Modified` HTTP-date that is strong by
    /// RFC 9110 §8.8.2.2 (only when the response had no entity tag). Sent back in `If-Range`.
    public let validator: String
    /// The representation's complete length in bytes, when the server announced it.
    public let expectedLength: Int64?
    /// The file holding the first ``offset`` bytes.
    public let partialFileURL: URL
    /// The SHA-256 of the whole representation (32 bytes) that a response of the interrupted
    /// download announced in `Repr-Digest` (RFC 9530 §3) or `Digest` (RFC 3230), when one did.
    /// The resumed download checks the assembled file against it even when the responses after
    /// the resume carry no digest — a `416` that says every byte is already here included. `nil`
    /// in resume data persisted before this field existed.
    public let representationSHA256: Data?

    package init(
        url: URL, offset: Int64, validator: String, expectedLength: Int64?, partialFileURL: URL,
        representationSHA256: Data? = nil
    ) {
        self.url = url
        self.offset = offset
        self.validator = validator
        self.expectedLength = expectedLength
        self.partialFileURL = partialFileURL
        self.representationSHA256 = representationSHA256
    }

    /// Deletes the partial file, for a download that will not be resumed. Never throws: a file
    /// already gone is what was asked for.
    public func removePartialFile() {
        try? FileManager.default.removeItem(at: partialFileURL)
        PartialDownloadFile.removeFolderIfEmpty(partialFileURL.deletingLastPathComponent())
    }
}
