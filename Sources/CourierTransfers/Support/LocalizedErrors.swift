import Courier
import Foundation

// The transfer errors are `LocalizedError`s, as Courier's own are, so `localizedDescription` shows
// their description (why a download stopped and whether it can be resumed, or the registry or
// record file and what went wrong) instead of Foundation's generic "The operation couldn't be
// completed".

extension DownloadError: LocalizedError, DescribedError {}
extension UploadManagerError: LocalizedError, DescribedError {}
extension BackgroundDownloadError: LocalizedError, DescribedError {}
extension ResumableUploadStoreError: LocalizedError, DescribedError {}
