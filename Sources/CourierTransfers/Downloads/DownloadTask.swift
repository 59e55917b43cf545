import Courier
import Foundation

/// A download in progress: its ``progress`` and, once it ends, its ``value`` (the destination)
/// or a ``DownloadError`` carrying ``DownloadError/resumeData``. Returned by
/// ``Courier/APIClient/download(_:to:resumingFrom:idleTimeout:)``; the download starts at once and runs until it
/// finishes, fails or is cancelled, whether or not anyone awaits it.
///
/// ```swift
/// let task = client.download(GetVideo(id: 7), to: videoURL, resumingFrom: savedResumeData)
/// Task { for await p in task.progress { bar.update(p.fractionCompleted) } }
/// do throws(DownloadError) {                         // `error` is a DownloadError, in a closure too
///     let file = try await task.value.value          // == videoURL, complete and verified
/// } catch {
///     savedResumeData = error.resumeData             // nil when nothing can be reused
/// }
/// ```
public final class DownloadTask: Sendable {
    /// Progress values, in order: the first is sent before the request (the bytes kept from
    /// the resume data, usually with an unknown total), then one per chunk written; the sequence
    /// ends when the download does. Only the newest value is buffered, so a slow reader skips
    /// values but always sees the last one. Any number of readers may iterate it at once, each
    /// from the latest value to the download's end.
    public var progress: AsyncStream<TransferProgress> { readers.subscribe() }
    private let readers: ProgressFanOut
    private let task: Task<Result<Response<URL>, DownloadError>, Never>

    init(
        progress: AsyncStream<TransferProgress>,
        operation: @escaping @Sendable () async -> Result<Response<URL>, DownloadError>
    ) {
        readers = ProgressFanOut.forward(progress)
        self.task = Task { await operation() }
    }

    /// The outcome: the destination URL with the final response and its context, or the error.
    /// Cancelling the task that awaits it cancels the download.
    public var result: Result<Response<URL>, DownloadError> {
        get async {
            let task = self.task
            return await withTaskCancellationHandler {
                await task.value
            } onCancel: {
                task.cancel()
            }
        }
    }

    /// The destination URL (with the final response and its context) once the file is complete,
    /// verified and in place.
    ///
    /// - Throws: ``DownloadError``; a cancelled download throws one whose
    ///   ``DownloadError/isCancellation`` is `true`, with resume data when the bytes can be reused.
    public var value: Response<URL> {
        get async throws(DownloadError) { try await result.get() }
    }

    /// Stops the download. Awaiting ``value`` then throws a ``DownloadError`` with
    /// `NetworkError.cancelled` and, when the bytes received can be reused, resume data (like
    /// URLSession's `cancel(byProducingResumeData:)`); otherwise the partial file is deleted.
    public func cancel() { task.cancel() }
}
