import Foundation

/// Where a transfer that an ``UploadManager`` or a ``BackgroundDownloads`` manager keeps a record
/// of stands: the record's `state`, persisted in the manager's registry (JSON).
public enum TransferState: Sendable, Codable, Hashable {
    /// Not finished: running now, handed to the system, or to be started again by the manager's
    /// `resumePending()`.
    case pending
    /// Finished with this status from the server (2xx): an upload was answered; a download was
    /// verified and moved to its ``BackgroundDownloadRecord/destination``.
    case completed(statusCode: Int)
    /// Stopped; the message says why. A failed upload is failed for good and its staged file is
    /// removed; ``BackgroundDownloadRecord/isResumable`` says whether
    /// ``BackgroundDownloads/resume(_:)`` can continue a failed download.
    case failed(String)
}
