import Courier
import Foundation

/// A running upload: its progress as an `AsyncSequence` and its response.
///
/// ```swift
/// let upload = client.upload(Request<Photo>.post("/photos", body: .file(photoURL, contentType: "image/jpeg")))
/// for await step in upload.progress { bar.fraction = step.fractionCompleted ?? 0 }
/// let photo: Photo = try await upload.value
/// ```
///
/// The upload starts at once and runs whether or not anyone reads ``progress``; it goes through
/// the client's whole pipeline (auth, retries, idempotency key, logging, metrics, deadline).
/// Cancel it with ``cancel()``, or by cancelling the task awaiting ``response`` or ``value``.
public struct Upload<Value: Sendable>: Sendable {
    /// The bytes of the request body sent so far and the total when known.
    ///
    /// Never decreases — when a retry or a 307/308 redirect sends the body again, the value waits
    /// until the new send passes it — and, when the upload succeeds, its last element is the total
    /// (`completedBytes == totalBytes`); after a failure or cancellation it just finishes. Slow
    /// readers see the newest value (intermediate ones are dropped). Any number of readers may
    /// iterate it at once, each from the latest value to the upload's end (a reader that starts
    /// after the end gets the last value and finishes). Works on every platform: URLSession's
    /// `didSendBodyData`.
    public var progress: AsyncStream<TransferProgress> { readers.subscribe() }
    private let readers: ProgressFanOut
    private let task: Task<Response<Value>, any Error>
    /// The call's context, also after a failure (the redirects it followed); `nil` for an upload
    /// made of several calls (tus).
    package let context: RequestContext?

    init(progress: AsyncStream<TransferProgress>, task: Task<Response<Value>, any Error>, context: RequestContext? = nil) {
        readers = ProgressFanOut.forward(progress)
        self.task = task
        self.context = context
    }

    /// The decoded value with the HTTP response and the call's context.
    ///
    /// - Throws: `NetworkError`, as `APIClient.response(for:)`; `NetworkError.cancelled`
    ///   after ``cancel()``. Cancelling the awaiting task cancels the upload.
    public var response: Response<Value> {
        get async throws {
            try await withTaskCancellationHandler {
                try await task.value
            } onCancel: { [task] in
                task.cancel()
            }
        }
    }

    /// The decoded value. - Throws: See ``response``.
    public var value: Value {
        get async throws { try await response.value }
    }

    /// Cancels the upload: the request stops, ``progress`` finishes, ``response`` throws
    /// `NetworkError.cancelled`.
    public func cancel() { task.cancel() }
}
