import Courier
import Foundation

/// Why a download failed, and the ``resumeData`` to continue it when the bytes received so far
/// can be reused (URLSession hands resume data out the same way, inside the error).
///
/// Nothing is ever left at the destination: the file is moved there only when complete and
/// verified. The partial bytes are kept only when ``resumeData`` is non-`nil` (at its
/// ``DownloadResumeData/partialFileURL``); otherwise they are already deleted.
public struct DownloadError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Equatable {
        /// The request or the body failed: a status the endpoint does not accept, a transport
        /// failure after the retries the endpoint's `RetryPolicy` allows, the deadline, or
        /// `NetworkError.cancelled` when the task was cancelled.
        case network(NetworkError)
        /// The server sent more bytes than it announced (`Content-Length` or the complete length of
        /// `Content-Range`), or a body that could not continue the partial data. The data is deleted.
        case lengthMismatch(expected: Int64, received: Int64)
        /// The file's SHA-256 is not the one in the server's `field` (`Repr-Digest`,
        /// `Content-Digest` — RFC 9530 — or the legacy `Digest`). Both as lower-case hex. The data is deleted.
        case digestMismatch(field: String, expected: String, actual: String)
        /// The file could not be written, read back or moved into place (disk full, no
        /// permission, the destination's folder is on another volume), or the destination cannot
        /// take a file (a directory, or not a file URL: found before anything is sent);
        /// the text says which.
        case fileSystem(String)
    }

    /// What went wrong.
    public let reason: Reason
    /// How to continue the download with ``Courier/APIClient/download(_:to:resumingFrom:idleTimeout:)``; `nil` when
    /// nothing reusable was received (no strong validator, a content-coded body, nothing written
    /// yet, or the data failed verification).
    public let resumeData: DownloadResumeData?

    /// Creates an error.
    public init(_ reason: Reason, resumeData: DownloadResumeData? = nil) {
        self.reason = reason
        self.resumeData = resumeData
    }

    /// `true` when the download was cancelled (by ``DownloadTask/cancel()`` or by cancelling the
    /// task awaiting it) — not a failure to show.
    public var isCancellation: Bool { reason == .network(.cancelled) }

    public var description: String {
        let resume = resumeData.map { " (resumable from byte \($0.offset), partial file \($0.partialFileURL.path))" } ?? ""
        switch reason {
        case .network(let error): return "download failed: \(error)\(resume)"
        case .lengthMismatch(let expected, let received):
            return "download failed: \(received) bytes received, \(expected) announced"
        case .digestMismatch(let field, let expected, let actual):
            return "download failed: SHA-256 \(actual) is not the \(field) value \(expected)"
        case .fileSystem(let text): return "download failed: file system: \(text)\(resume)"
        }
    }
}
