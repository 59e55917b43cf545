import Courier
import Foundation

/// One upload an ``UploadManager`` knows about, as persisted in its registry.
public struct UploadRecord: Sendable, Codable, Hashable, Identifiable {
    /// Where an upload stands (the same states as a background download's).
    public typealias State = TransferState

    /// The upload's identifier; also the background task's `taskDescription`.
    public let id: UUID
    /// The request method, e.g. `POST`.
    public var method: String
    /// The absolute request URL.
    public var url: URL
    /// Header fields sent with the upload (`Content-Type` among them).
    public var headers: [String: String]
    /// The staged file's name inside the manager's staging folder.
    public var stagedFileName: String
    /// How it is sent.
    public var mode: UploadMode
    /// Where it stands.
    public var state: State
    /// When it was enqueued.
    public var createdAt: Date
    /// The account it was enqueued under (``UploadManager/account`` then), or `nil` when the app
    /// declares none: it is sent only while that account is the current one, and only with a
    /// token of its sign-in. Records written before this field existed read as `nil`.
    public var account: String?
    /// Whether a foreground sending of this upload may have begun: written to the registry before
    /// an upload that is not safe to repeat (``UploadManager`` `mayRepeat`) goes out, and cleared
    /// when a failure shows the server never handled it. A relaunch that finds it set does not
    /// send the upload again (the previous process may have ended after the server stored it).
    /// Records written before this field existed read as `nil`.
    package var sendMayHaveBegun: Bool?
    /// The identifier of the environment the upload was enqueued in (`APIEnvironment.id`), whose
    /// server ``url`` addresses: a foreground upload is sent only while the client points at that
    /// environment, so another environment's token never goes with it. Records written before
    /// this field existed read as `nil` (sent in any environment).
    package var environment: String?
    /// The manager that sends it now or last sent it (see ``UploadSender``): another manager on the
    /// folder leaves a pending upload alone while that sender is alive. Records written before
    /// this field existed read as `nil` (no sender).
    package var sender: UploadSender?

    package init(
        id: UUID, method: String, url: URL, headers: [String: String], stagedFileName: String, mode: UploadMode,
        state: State, createdAt: Date
    ) {
        self.id = id
        self.method = method
        self.url = url
        self.headers = headers
        self.stagedFileName = stagedFileName
        self.mode = mode
        self.state = state
        self.createdAt = createdAt
    }
}
