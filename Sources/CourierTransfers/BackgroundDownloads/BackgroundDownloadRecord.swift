import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One download a ``BackgroundDownloads`` manager knows about, as persisted in its registry.
public struct BackgroundDownloadRecord: Sendable, Codable, Hashable, Identifiable {
    /// Where a download stands (the same states as an upload's).
    public typealias State = TransferState

    /// The download's identifier; also the background task's `taskDescription`.
    public let id: UUID
    /// The absolute request URL.
    public var url: URL
    /// Header fields sent (besides `Authorization`, set at hand-over).
    public var headers: [String: String]
    /// Where the verified file is moved.
    public var destination: URL
    /// Where it stands.
    public var state: State
    /// The name of the file holding the resume data of a failed download, in the manager's folder.
    public var resumeDataFileName: String?
    /// When it was enqueued.
    public var createdAt: Date

    /// Whether ``BackgroundDownloads/resume(_:)`` can continue it from the bytes already received.
    public var isResumable: Bool { resumeDataFileName != nil }
}
