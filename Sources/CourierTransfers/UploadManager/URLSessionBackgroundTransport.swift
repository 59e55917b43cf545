import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``BackgroundTransport`` over a delegate-based `URLSession`: file uploads and downloads only.
///
/// On Apple platforms create it with ``init(identifier:downloadsDirectory:)`` — a session from
/// `URLSessionConfiguration.background(withIdentifier:)` that the system keeps running while the
/// app is suspended or terminated. Create exactly one per identifier, early at every launch (the
/// session is recreated with the same identifier and receives the events of tasks started
/// before), and hand the system's completion handler to
/// ``handleEventsForBackgroundURLSession(identifier:completionHandler:)`` (see <doc:BackgroundUploads>).
/// On Linux, which has no background sessions, the same initializer makes an ordinary session.
///
/// ``init(configuration:downloadsDirectory:)`` runs the same tasks in an ordinary session (every platform, used by the
/// tests on Linux): nothing survives the process there.
public final class URLSessionBackgroundTransport: NSObject, BackgroundTransport, @unchecked Sendable {
    // @unchecked Sendable: `session` is set once in init; the mutable maps live in `Locked` boxes.

    /// The most response body bytes kept per upload.
    static let maxResponseBody = 1 << 20

    private var session: URLSession!
    /// Where finished downloads are moved.
    public let downloadsDirectory: URL
    public let events: AsyncStream<BackgroundTransferEvent>
    private let continuation: AsyncStream<BackgroundTransferEvent>.Continuation
    /// Bytes written by running downloads and sent by running uploads.
    public let progress: AsyncStream<BackgroundTransferProgress>
    private let progressContinuation: AsyncStream<BackgroundTransferProgress>.Continuation
    private let bodies = Locked<[Int: Data]>([:])
    private let downloads = Locked<[Int: URL]>([:])
    private let systemCompletion = Locked<(@Sendable () -> Void)?>(nil)

    /// A transport over a session with `configuration` (a delegate-based session is created).
    ///
    /// - Parameters:
    ///   - configuration: The session configuration.
    ///   - downloadsDirectory: Where finished downloads are moved; by default a Courier folder of
    ///     the current user in the temporary directory (`Courier-background-downloads-<uid>`: on
    ///     Linux every local user shares `/tmp`). A folder another user owns is not used: a
    ///     download finishing there fails with `URLError.cannotMoveFile`.
    public init(configuration: URLSessionConfiguration, downloadsDirectory: URL? = nil) {
        (events, continuation) = AsyncStream.makeStream(of: BackgroundTransferEvent.self, bufferingPolicy: .unbounded)
        (progress, progressContinuation) = AsyncStream.makeStream(
            of: BackgroundTransferProgress.self, bufferingPolicy: .bufferingNewest(64))
        self.downloadsDirectory =
            downloadsDirectory
            ?? FileManager.default.temporaryDirectory.appendingPathComponent(
                "Courier-background-downloads-\(geteuid())", isDirectory: true)
        super.init()
        session = URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    /// A transport over the background session `identifier`: on Apple platforms a session the
    /// system runs while the app is suspended or terminated, relaunching it when tasks finish; on
    /// Linux (no background sessions) an ordinary ephemeral session whose tasks end with the process.
    ///
    /// - Parameters:
    ///   - identifier: The background session's identifier; the same at every launch.
    ///   - downloadsDirectory: Where finished downloads are moved.
    public convenience init(identifier: String, downloadsDirectory: URL? = nil) {
        let configuration = PlatformAdapters.backgroundSessions.configuration(identifier: identifier)
        self.init(configuration: configuration, downloadsDirectory: downloadsDirectory)
    }

    /// Keeps the completion handler of `application(_:handleEventsForBackgroundURLSession:completionHandler:)`
    /// and calls it on the main queue once the session has delivered every event
    /// (`urlSessionDidFinishEvents(forBackgroundURLSession:)`), so the system can snapshot the UI
    /// and suspend the app again. Never called by the system on Linux.
    ///
    /// - Parameters:
    ///   - identifier: The identifier the system passed; ignored unless it is this session's.
    ///   - completionHandler: The system's handler.
    public func handleEventsForBackgroundURLSession(identifier: String, completionHandler: @escaping @Sendable () -> Void) {
        guard identifier == session.configuration.identifier else { return }
        systemCompletion.set(completionHandler)
    }

    public func startUpload(_ request: URLRequest, fromFile fileURL: URL, taskDescription: String) throws {
        let task = session.uploadTask(with: request, fromFile: fileURL)
        task.taskDescription = taskDescription
        task.resume()
    }

    public func startDownload(_ request: URLRequest, taskDescription: String) throws {
        let task = session.downloadTask(with: request)
        task.taskDescription = taskDescription
        task.resume()
    }

    public func startDownload(resumingWith resumeData: Data, taskDescription: String) throws {
        let task = session.downloadTask(withResumeData: resumeData)
        task.taskDescription = taskDescription
        task.resume()
    }

    public func runningTaskDescriptions() async -> [String] {
        await withCheckedContinuation { continuation in
            session.getAllTasks { tasks in continuation.resume(returning: tasks.compactMap(\.taskDescription)) }
        }
    }

    public func cancelTask(withDescription taskDescription: String) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            session.getAllTasks { tasks in
                for task in tasks where task.taskDescription == taskDescription { task.cancel() }
                continuation.resume()
            }
        }
    }
}

extension URLSessionBackgroundTransport: URLSessionDataDelegate, URLSessionDownloadDelegate {
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        bodies.withLock { bodies in
            let current = bodies[dataTask.taskIdentifier] ?? Data()
            guard current.count < Self.maxResponseBody else { return }
            bodies[dataTask.taskIdentifier] = current + data.prefix(Self.maxResponseBody - current.count)
        }
    }

    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        reportProgress(of: downloadTask, completed: totalBytesWritten, expected: totalBytesExpectedToWrite)
    }

    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        reportProgress(of: task, completed: totalBytesSent, expected: totalBytesExpectedToSend)
    }

    /// Publishes a task's progress under its `taskDescription`; an unknown total
    /// (`NSURLSessionTransferSizeUnknown`, -1) is `nil`.
    private func reportProgress(of task: URLSessionTask, completed: Int64, expected: Int64) {
        guard let description = task.taskDescription else { return }
        progressContinuation.yield(
            BackgroundTransferProgress(
                taskDescription: description, completedBytes: completed, totalBytes: expected > 0 ? expected : nil))
    }

    /// Keeps credentials on their origin when the session follows a redirect: a hop to another
    /// origin goes without `Authorization`, `Cookie` and the other secret header fields the
    /// hand-over set (RFC 9110 §15.4), and an `https` → `http` hop is not followed (the redirect is
    /// the task's response). A background session on Apple platforms follows redirects without
    /// asking its delegate.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(RedirectSafety.followedBySession(request, from: response.url ?? task.currentRequest?.url))
    }

    public func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL) {
        // The system deletes `location` when this method returns: move it now.
        let destination = downloadsDirectory.appendingPathComponent(UUID.random().uuidString)
        do {
            // The user's file, its owner's alone as a foreground download's is (the system's file
            // may be readable by others), in a folder created 0700. A file system without modes
            // refuses nothing else for it: the download is kept.
            try FileManager.default.createDirectory(
                at: downloadsDirectory, withIntermediateDirectories: true, attributes: AtomicFile.folderAttributes)
            guard Self.isOwnFolder(downloadsDirectory) else {
                throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: downloadsDirectory.path])
            }
            try FileManager.default.moveItem(at: location, to: destination)
            try? FileManager.default.setAttributes(
                [.posixPermissions: Int(AtomicFile.fileMode)], ofItemAtPath: destination.path)
            downloads.withLock { $0[downloadTask.taskIdentifier] = destination }
        } catch {
            try? FileManager.default.removeItem(at: location)
        }
    }

    /// Whether `folder` is a folder the process's user owns. Another local user's folder (one made
    /// first at the same path in a shared temporary directory) is not: its owner could rename or
    /// replace a download moved into it before it is checked and moved into place.
    static func isOwnFolder(_ folder: URL) -> Bool {
        var info = stat()
        guard stat(folder.path, &info) == 0 else { return false }
        return info.st_mode & S_IFMT == S_IFDIR && info.st_uid == geteuid()
    }

    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let id = task.taskIdentifier
        let body = bodies.withLock { $0.removeValue(forKey: id) } ?? Data()
        let file = downloads.withLock { $0.removeValue(forKey: id) }
        guard let description = task.taskDescription else {
            if let file { try? FileManager.default.removeItem(at: file) }
            return
        }
        let outcome: BackgroundTransferEvent.Outcome
        let headers = (task.response as? HTTPURLResponse).map(HTTPHeaders.init) ?? HTTPHeaders()
        var resumeData: Data?
        if let error {
            if let file { try? FileManager.default.removeItem(at: file) }
            let urlError = error as? URLError ?? URLError(.unknown, userInfo: [NSUnderlyingErrorKey: error])
            resumeData = urlError.userInfo[Self.resumeDataKey] as? Data
            outcome = .failed(urlError)
        } else if let http = task.response as? HTTPURLResponse {
            if task is URLSessionDownloadTask {
                guard let file else {
                    continuation.yield(
                        BackgroundTransferEvent(taskDescription: description, outcome: .failed(URLError(.cannotMoveFile))))
                    return
                }
                outcome = .downloaded(statusCode: http.statusCode, fileURL: file)
            } else {
                outcome = .uploaded(statusCode: http.statusCode, headers: HTTPHeaders(http), body: body)
            }
        } else {
            outcome = .failed(URLError(.badServerResponse))
        }
        continuation.yield(
            BackgroundTransferEvent(
                taskDescription: description, outcome: outcome, responseHeaders: headers, resumeData: resumeData))
    }

    /// Where URLSession puts a failed download's resume data in the error's `userInfo`
    /// (`NSURLSessionDownloadTaskResumeData`).
    static let resumeDataKey = "NSURLSessionDownloadTaskResumeData"

    /// Calls the completion handler kept by ``handleEventsForBackgroundURLSession(identifier:completionHandler:)``
    /// on the main queue (Apple platforms; Linux never calls this).
    public func urlSessionDidFinishEvents(forBackgroundURLSession session: URLSession) {
        guard
            let handler = systemCompletion.withLock({ value -> (@Sendable () -> Void)? in
                defer { value = nil }
                return value
            })
        else { return }
        DispatchQueue.main.async { handler() }
    }
}
