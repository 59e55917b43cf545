import Foundation

// The transfer errors are `LocalizedError`s, as Courier's own are, so `localizedDescription` shows
// their description instead of Foundation's generic "The operation couldn't be completed".

extension DownloadError: LocalizedError {
    /// The description (why the download stopped, and whether it can be resumed).
    public var errorDescription: String? { description }
}

extension UploadManagerError: LocalizedError {
    /// The description (the registry's path and what went wrong).
    public var errorDescription: String? { description }
}

extension BackgroundDownloadError: LocalizedError {
    /// The description (the download or the registry, and what went wrong).
    public var errorDescription: String? { description }
}

extension ResumableUploadStoreError: LocalizedError {
    /// The description (the record's path and what went wrong).
    public var errorDescription: String? { description }
}
