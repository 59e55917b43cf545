/// How far a download is: bytes of the file received so far and, when the server announced it,
/// how many there will be.
///
/// ``bytesReceived`` never decreases while ``restarts`` stays the same. When the server's file
/// changed (or it ignored the range), the partial data is discarded and the download starts from
/// zero: the next value has ``restarts`` one higher and ``bytesReceived`` counting the new
/// attempt from 0 — a progress bar should reset rather than jump back silently.
public struct DownloadProgress: Sendable, Hashable {
    /// Bytes of the file received so far, including those kept from an earlier attempt
    /// (a resumed download starts at its ``DownloadResumeData/offset``).
    public var bytesReceived: Int64
    /// The file's length in bytes, or `nil` when unknown: the body is chunked without a length,
    /// or content-coded (gzip, br — the length on the wire is not the file's). Never guessed.
    public var totalBytesExpected: Int64?
    /// How many times the received data was discarded and the download started from zero.
    public var restarts: Int

    /// `bytesReceived / totalBytesExpected` in `0...1`, or `nil` when the total is unknown.
    public var fractionCompleted: Double? {
        guard let total = totalBytesExpected else { return nil }
        guard total > 0 else { return 1 }
        return min(1, max(0, Double(bytesReceived) / Double(total)))
    }

    /// Creates a value.
    public init(bytesReceived: Int64, totalBytesExpected: Int64?, restarts: Int = 0) {
        self.bytesReceived = bytesReceived
        self.totalBytesExpected = totalBytesExpected
        self.restarts = restarts
    }
}
