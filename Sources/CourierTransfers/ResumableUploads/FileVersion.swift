import Courier
import Foundation

/// The version of a file a tus run reads its chunks from: its size and modification date
/// (nanoseconds where the file system keeps them), taken when the run starts.
struct FileVersion: Equatable, Sendable {
    let size: Int64?
    let modified: Date?

    init(of url: URL) {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        size = (attributes?[.size] as? NSNumber)?.int64Value
        modified = attributes?[.modificationDate] as? Date
    }

    /// Throws when the file at `url` is no longer this version (rewritten, truncated, replaced or
    /// gone), after removing the upload's record for `key`: the server's upload may hold bytes of
    /// two versions, and must not be resumed.
    ///
    /// - Throws: `NetworkError.invalidRequest(_:)` naming the file.
    func check(_ url: URL, record key: String, in store: ResumableUploadStore) throws {
        guard FileVersion(of: url) != self else { return }
        store.remove(key)
        throw NetworkError.invalidRequest(
            "the upload file '\(url.lastPathComponent)' changed while it was being uploaded: upload it again")
    }
}
