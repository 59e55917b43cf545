import Courier
import Foundation

extension APIClient {
    /// Downloads the body of `endpoint` into the file at `destination`, in constant memory, on
    /// every platform the same way (Courier writes the file itself from the streamed body).
    ///
    /// - The bytes go to a partial file in a `.courier-downloads` folder next to `destination`;
    ///   the file is moved to `destination` (replacing any file there, atomically with
    ///   `rename(2)`) only once it is complete and verified: its length against `Content-Length`
    ///   or `Content-Range`, and its SHA-256 against `Repr-Digest`, `Content-Digest` (RFC 9530)
    ///   or `Digest` (RFC 3230) when the server sends one. Nothing partial is ever at `destination`.
    ///   Partial files of that folder untouched for seven days (a resume value the app lost) are
    ///   deleted when a new download starts there.
    /// - The file is the app's alone, as a file URLSession downloads on Apple platforms is the
    ///   app's: the partial file and then the file at `destination` have mode 0600 (a file it
    ///   replaces does not pass on its mode), and the folders Courier creates for them (the
    ///   `.courier-downloads` folder, a missing folder of `destination`) 0700. To share the file
    ///   with other local users, set its permissions once the download has finished.
    /// - Every attempt asks for `Accept-Encoding: identity`, so lengths and ranges count the
    ///   file's bytes. A response with a strong validator (RFC 9110 §8.8.1: a strong `ETag`, or a
    ///   `Last-Modified` 60 s older than `Date`) makes the download resumable: after a failure or
    ///   a cancellation the error carries ``DownloadError/resumeData``.
    /// - A transient failure mid-body (connection lost, timed out) is continued automatically
    ///   with `Range: bytes=N-` and `If-Range` (RFC 9110 §14.2, §13.1.5), at most
    ///   `RetryPolicy.maxRetries` times, after the policy's backoff. Failures before the first
    ///   byte are retried by the pipeline, as for any call.
    /// - When the server ignores the range (a `200`), its file changed (another validator), or
    ///   its `Content-Range` does not start where asked, the partial data is discarded and the
    ///   download starts from zero; `TransferProgress.restarts` counts it — unless the request
    ///   may not be repeated (a `POST` without an idempotency key, resumed by the caller): that
    ///   resume then fails with `URLError.badServerResponse` instead of sending it again. A `416` whose
    ///   `Content-Range` says the file has exactly the bytes already received completes it.
    /// - A `206` is read against its `Content-Range` (RFC 9110 §14.4, §15.3.7): a body that runs
    ///   past the range fails with ``DownloadError/Reason/lengthMismatch(expected:received:)``, one
    ///   that stops short of it is a lost connection (continued as above), and a part that ends
    ///   before the file does is followed by a request for the rest. A part of unknown complete
    ///   length (`bytes a-b/*`) never ends the download: the downloader asks again from `b+1`
    ///   until a `416` says the file has exactly the bytes held, a part gives its complete length,
    ///   or a `200` starts over; after 1024 such parts it fails with `URLError.badServerResponse`
    ///   and resume data.
    ///
    /// The endpoint's policy applies to each request (auth, retries, logging, metrics); its
    /// `EndpointPolicy.deadline` bounds each request up to the response head (see
    /// `APIClient.stream(_:options:)`), not the whole transfer. Its `Response` type is not used.
    ///
    /// - Parameters:
    ///   - endpoint: The resource to download (a `GET` usually).
    ///   - destination: A file URL; its folder is created when missing. A directory, or a URL that
    ///     is not a file URL, fails at once with ``DownloadError/Reason/fileSystem(_:)``.
    ///   - resumeData: What a failed or cancelled download returned; a resume for another URL,
    ///     or whose partial file is gone, starts from zero.
    ///   - idleTimeout: The longest silence between body bytes (60 s by default, URLSession's
    ///     `timeoutIntervalForRequest`): past it the attempt fails as timed out and is continued
    ///     like any transient failure (so a server that stalls for good fails the download after
    ///     about `idleTimeout` × (1 + `RetryPolicy.maxRetries`) plus the backoff).
    /// - Returns: The running download.
    public func download<E: Endpoint>(
        _ endpoint: E, to destination: URL, resumingFrom resumeData: DownloadResumeData? = nil,
        idleTimeout: Duration = .seconds(60)
    ) -> DownloadTask {
        let (progress, continuation) = AsyncStream.makeStream(
            of: TransferProgress.self, bufferingPolicy: .bufferingNewest(1))
        let downloader = Downloader(
            client: self, endpoint: endpoint, destination: destination, resumeData: resumeData, idleTimeout: idleTimeout,
            progress: continuation)
        return DownloadTask(progress: progress) { await downloader.run() }
    }
}
