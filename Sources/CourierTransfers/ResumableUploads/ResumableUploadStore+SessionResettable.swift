import Courier
import Foundation

extension ResumableUploadStore: SessionResettable {
    /// Forgets every unfinished upload of this store: removes each record in ``directory``, so
    /// the next account that signs in never resumes one of the previous account's uploads, with
    /// its own token, nor learns its upload URL. (A record is keyed by the file and the creation
    /// URL, not by the account: without the reset, the same file uploaded by the next account
    /// would resume the previous one's upload.) The server's uploads are left as they are (no
    /// tus termination request is sent); they expire on the server's schedule.
    ///
    /// Pass the store at sign-out: `try await client.resetSession(also: [store])`.
    ///
    /// - Throws: ``ResumableUploadStoreError/recordUnreadable(path:reason:)`` when the folder
    ///   exists but cannot be listed, or the file system's error when a record cannot be removed
    ///   (the records before it are removed, the rest stay).
    ///
    /// A run of ``TusUploader`` that began before the reset never writes its record back after it
    /// (a request in flight at sign-out may still finish): it fails with
    /// `NetworkError.signedOut` at its next save.
    public func resetSession() async throws {
        try Self.resets.withLock { resets in
            resets[resetKey, default: 0] += 1
            let files: [URL]
            do {
                files = try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            } catch {
                if !FileManager.default.fileExists(atPath: directory.path) { return }
                throw ResumableUploadStoreError.recordUnreadable(path: directory.path, reason: String(describing: error))
            }
            for file in files where Self.isRecordFile(file) {
                try FileManager.default.removeItem(at: file)
            }
        }
    }

    /// The folder of records: two stores of one folder hold the same uploads.
    public var sessionStateIdentities: [SessionStateIdentity] {
        [SessionStateIdentity(key: "tus-records:" + directory.standardizedFileURL.path, label: "one resumable upload store")]
    }
}
