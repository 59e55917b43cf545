import Foundation

/// How far a transfer has come — an upload's request body or a download's file: bytes done and,
/// when known, the total. The one progress type of uploads, downloads and resumable uploads.
///
/// ``completedBytes`` never decreases while ``restarts`` stays the same. When a download's file
/// changed on the server (or the server ignored the range), the data received is discarded and
/// the transfer starts from zero: the next value has ``restarts`` one higher and
/// ``completedBytes`` counting the new attempt from 0 — a progress bar should reset rather than
/// jump back silently.
public struct TransferProgress: Sendable, Hashable {
    /// Bytes transferred so far: request body bytes sent (upload), or bytes of the file received,
    /// including those kept from an earlier attempt (a resumed download starts at its
    /// `DownloadResumeData.offset` of CourierTransfers).
    public let completedBytes: Int64
    /// The total in bytes, or `nil` when unknown: a streamed body of unknown length; a download
    /// whose body is chunked without a length or content-coded (gzip, br — the length on the wire
    /// is not the file's). Never guessed.
    public let totalBytes: Int64?
    /// How many times the data transferred was discarded and the transfer started from zero.
    public let restarts: Int

    /// Creates a value.
    public init(completedBytes: Int64, totalBytes: Int64?, restarts: Int = 0) {
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
        self.restarts = restarts
    }

    /// `completedBytes / totalBytes` in `0...1`, or `nil` when the total is unknown (1 for an
    /// empty body).
    public var fractionCompleted: Double? {
        guard let totalBytes else { return nil }
        guard totalBytes > 0 else { return 1 }
        return min(1, max(0, Double(completedBytes) / Double(totalBytes)))
    }
}
