import Courier
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

    /// Continues a download from the resume data a failed one left
    /// (``BackgroundTransferEvent/resumeData``).
    ///
    /// - Throws: When the task cannot be created; by default `URLError(.unsupportedURL)`: the
    ///   transport cannot resume.
    func startDownload(resumingWith resumeData: Data, taskDescription: String) throws

    /// Bytes moved so far by running tasks, for progress bars; by default a stream that never
    /// yields. For one reader.
    var progress: AsyncStream<BackgroundTransferProgress> { get }
}

extension BackgroundTransport {
    /// Resuming is not supported: throws `URLError(.unsupportedURL)`.
    public func startDownload(resumingWith resumeData: Data, taskDescription: String) throws {
        throw URLError(.unsupportedURL)
    }

    /// A stream that never yields.
    public var progress: AsyncStream<BackgroundTransferProgress> { AsyncStream { _ in } }
}

/// How far one background task has got.
public struct BackgroundTransferProgress: Sendable, Hashable {
    /// The task's `taskDescription`.
    public let taskDescription: String
    /// Bytes received (download) or sent (upload) so far.
    public let completedBytes: Int64
    /// The expected total, when known.
    public let totalBytes: Int64?

    /// A progress value (for a ``BackgroundTransport`` of your own).
    public init(taskDescription: String, completedBytes: Int64, totalBytes: Int64?) {
        self.taskDescription = taskDescription
        self.completedBytes = completedBytes
        self.totalBytes = totalBytes
    }
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
    /// The response's header fields (for a download: what its length and digest are checked
    /// against); empty without a response.
    public let responseHeaders: HTTPHeaders
    /// For a failed download: the data to continue it with
    /// ``BackgroundTransport/startDownload(resumingWith:taskDescription:)``, when the system kept
    /// the bytes received.
    public let resumeData: Data?

    /// An event (for a ``BackgroundTransport`` of your own).
    public init(
        taskDescription: String, outcome: Outcome, responseHeaders: HTTPHeaders = HTTPHeaders(), resumeData: Data? = nil
    ) {
        self.taskDescription = taskDescription
        self.outcome = outcome
        self.responseHeaders = responseHeaders
        self.resumeData = resumeData
    }
}
