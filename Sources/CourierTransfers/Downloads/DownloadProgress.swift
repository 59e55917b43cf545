import Courier

/// A download's progress is a `TransferProgress`, the one progress type of every transfer.
@available(*, deprecated, renamed: "TransferProgress")
public typealias DownloadProgress = TransferProgress

extension TransferProgress {
    /// The former `DownloadProgress.bytesReceived`: `completedBytes`.
    @available(*, deprecated, renamed: "completedBytes")
    public var bytesReceived: Int64 { completedBytes }

    /// The former `DownloadProgress.totalBytesExpected`: `totalBytes`.
    @available(*, deprecated, renamed: "totalBytes")
    public var totalBytesExpected: Int64? { totalBytes }

    /// The former `DownloadProgress(bytesReceived:totalBytesExpected:restarts:)`.
    @available(*, deprecated, renamed: "init(completedBytes:totalBytes:restarts:)")
    public init(bytesReceived: Int64, totalBytesExpected: Int64?, restarts: Int = 0) {
        self.init(completedBytes: bytesReceived, totalBytes: totalBytesExpected, restarts: restarts)
    }
}
