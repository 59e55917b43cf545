import Courier
import Foundation

/// How an ``UploadManager`` sends a staged upload.
public enum UploadMode: String, Sendable, Codable, Hashable {
    /// Through the client's pipeline while the app runs (auth with refresh, retries, progress);
    /// an upload interrupted by the app's end is sent again by ``UploadManager/resumePending()``.
    case foreground
    /// Through a ``BackgroundTransport`` — on Apple platforms a background `URLSession`, which the
    /// system keeps running while the app is suspended or terminated. The request is built once
    /// (no interceptors per attempt): its header fields come from ``UploadManager/prepareBackgroundRequest``.
    case background
}
