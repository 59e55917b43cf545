import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// File transfers run by a session that may outlive the app's process: on Apple platforms a
/// background `URLSession` (``URLSessionBackgroundTransport``). Tasks are known by their
/// `taskDescription`, which the session persists with them, so a relaunched app can match a
/// finished task to its own record.
public protocol BackgroundTransport: Sendable {
    /// Starts uploading the file at `fileURL` as the body of `request` (file uploads only:
    /// background sessions cannot send `Data` or streams).
    ///
    /// - Throws: When the task cannot be created.
    func startUpload(_ request: URLRequest, fromFile fileURL: URL, taskDescription: String) throws

    /// Starts downloading `request`'s response to a file.
    ///
    /// - Throws: When the task cannot be created.
    func startDownload(_ request: URLRequest, taskDescription: String) throws

    /// How each task ended, for tasks of this launch and of earlier ones. For one reader; events
    /// that arrive before it starts reading are kept.
    var events: AsyncStream<BackgroundTransferEvent> { get }

    /// The `taskDescription`s of the tasks the session still runs.
    func runningTaskDescriptions() async -> [String]

    /// Cancels the task with `taskDescription`, if it runs.
    func cancelTask(withDescription taskDescription: String) async
}

/// How one background task ended.
public struct BackgroundTransferEvent: Sendable {
    /// The outcome.
    public enum Outcome: Sendable {
        /// An upload got a response: status, header fields and body (at most 1 MiB kept).
        case uploaded(statusCode: Int, headers: HTTPHeaders, body: Data)
        /// A download finished: status and the file, moved out of the system's temporary
        /// location into the transport's folder (the receiver moves or deletes it).
        case downloaded(statusCode: Int, fileURL: URL)
        /// No response: the `URLError` (`.cancelled` when cancelled).
        case failed(URLError)
    }

    /// The task's `taskDescription`.
    public let taskDescription: String
    /// How it ended.
    public let outcome: Outcome

    /// An event (for a ``BackgroundTransport`` of your own).
    public init(taskDescription: String, outcome: Outcome) {
        self.taskDescription = taskDescription
        self.outcome = outcome
    }
}
