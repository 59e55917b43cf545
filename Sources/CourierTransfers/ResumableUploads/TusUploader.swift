import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Resumable uploads over the tus 1.0.0 core protocol with the creation extension
/// (https://tus.io/protocols/resumable-upload), through the client's pipeline (auth, retries,
/// logging, metrics).
///
/// ```swift
/// let tus = TusUploader(client: client, creationPath: "/files",
///                       store: ResumableUploadStore(directory: appSupport.appendingPathComponent("uploads")))
/// let upload = tus.upload(fileAt: videoURL, metadata: ["filename": "clip.mov"])
/// for await step in upload.progress { bar.fraction = step.fractionCompleted ?? 0 }
/// let location = try await upload.value      // the upload resource
/// ```
///
/// - **Create**: `POST creationPath` with `Upload-Length` (and `Upload-Metadata`, values Base64)
///   → `201` with `Location`. The upload URL and offset are saved in the ``ResumableUploadStore``
///   before any byte is sent, and the offset after every chunk, so a new process resumes. The
///   creation carries no `Idempotency-Key`, whatever the ``policy``, and is sent once: a tus
///   server does not know the key, and a second `POST` after a connection that broke before the
///   answer would create a second upload. Such a run fails with the network error.
/// - **Resume**: a stored upload is asked for its offset with `HEAD` (`Upload-Offset`) first.
///   An offset beyond the file, below the offset the server confirmed to the earlier run, or an
///   `Upload-Length` other than the file's is not this file's upload: the upload fails with
///   `NetworkError.transport` (`URLError.badServerResponse`) and its record is dropped, so the next
///   call creates a new upload.
/// - **Send**: `PATCH` chunks of ``chunkSize`` bytes as `application/offset+octet-stream` with
///   `Upload-Offset`, read from the file as they are sent (constant memory).
/// - **409 Conflict** (the offsets disagree): `HEAD` and continue from the server's offset — back
///   over bytes the server lost, but never beyond the bytes sent before the refused `PATCH`
///   (a `409` changes nothing): such an offset fails the upload as above.
/// - **404 / 410** (the server forgot or expired the upload): a new upload from byte 0 — also when
///   the `HEAD` after a failed or refused (409) `PATCH` answers 404, 410 or 403; twice a run at most.
/// - **A PATCH that failed on the way** (a lost connection, a time-out, a 5xx, 408 or 429 the
///   ``policy``'s retry rules retry): after its backoff (or the server's `Retry-After`, up to
///   `maxRetryAfter`), `HEAD` and continue from the server's offset — at most `maxRetries` times
///   in a row (the bytes the server confirmed count as progress, so a flaky link finishes; a
///   `HEAD` that fails in a way the policy retries counts as one more failure in the row).
///   An offset beyond every byte sent fails the upload as above. A PATCH carries no
///   `Idempotency-Key`, whatever the ``policy``, so neither the pipeline's retry step nor the
///   transport sends it again at the same offset: only this recovery repeats it.
/// - Any other failure throws `NetworkError` and keeps the record: calling ``upload(fileAt:key:metadata:)``
///   again with the same key resumes.
/// - One sign-in per run: once a request of the run carried a token, the later ones go out only
///   under that sign-in; after a sign-out and another sign-in the run fails with
///   `NetworkError.signedOut`, nothing sent (the rest of one user's file never goes out as another).
/// - **Accounts**: a stored upload is keyed by the file and the creation URL, not by the account.
///   Pass the store to the reset at sign-out, `try await client.resetSession(also: [store])`
///   (``ResumableUploadStore/resetSession()``), or give each account a store of its own; otherwise
///   the next account uploading the same file resumes the previous one's upload.
public struct TusUploader: Sendable {
    /// The tus version sent in `Tus-Resumable`.
    public static let version = "1.0.0"

    private let client: APIClient
    /// Where uploads are created (relative to the client's base URL, or absolute).
    public let creationPath: String
    /// Bytes per `PATCH` request; at least 1. Default 5 MiB.
    public let chunkSize: Int
    /// The policy of every tus request: `EndpointPolicy.authorizedUpload` by default.
    public let policy: EndpointPolicy
    /// Where upload URLs and offsets are persisted.
    public let store: ResumableUploadStore

    /// Creates an uploader.
    ///
    /// - Parameters:
    ///   - client: The client whose pipeline sends every request.
    ///   - creationPath: The creation endpoint (tus "upload creation URL").
    ///   - store: The persistent store of unfinished uploads.
    ///   - chunkSize: Bytes per `PATCH`, at least 1; default 5 MiB.
    ///   - policy: The policy of every request; default `EndpointPolicy.authorizedUpload`, which
    ///     requires an authorization interceptor in the client's pipeline (without one every upload
    ///     fails with `NetworkError.missingInterceptor(_:)`): for an API without auth, pass
    ///     `.authorizedUpload.with(\.auth, .none)`.
    public init(
        client: APIClient, creationPath: String, store: ResumableUploadStore, chunkSize: Int = 5 << 20,
        policy: EndpointPolicy = .authorizedUpload
    ) {
        self.client = client
        self.creationPath = creationPath
        self.store = store
        self.chunkSize = max(1, chunkSize)
        self.policy = policy
    }

    /// The client's clock, for the waits between a failed PATCH and the next.
    var clock: any Clock<Duration> { client.configuration.clock }

    /// The creation endpoint as an absolute URL, in the client's current environment.
    public var creationURL: URL? { TransferURL.resolve(creationPath, against: client.environment.baseURL) }

    /// The default key of an upload of `fileURL` to `creationURL`: the creation URL, then
    /// ``key(for:)`` — uploaders of other endpoints or environments sharing one store never take
    /// each other's uploads.
    public static func key(for fileURL: URL, creationURL: URL) -> String {
        creationURL.absoluteString + "|" + key(for: fileURL)
    }

    /// A file's identity: its path, size and modification date, so a changed file starts a new
    /// upload.
    public static func key(for fileURL: URL) -> String {
        let attributes = try? FileManager.default.attributesOfItem(atPath: fileURL.path)
        let size = (attributes?[.size] as? NSNumber)?.int64Value ?? -1
        let modified = (attributes?[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
        return "\(fileURL.standardizedFileURL.path)|\(size)|\(modified)"
    }

    /// Uploads the file at `fileURL`, resuming the stored upload for `key` when there is one.
    ///
    /// - Parameters:
    ///   - fileURL: The file; read in chunks, never whole.
    ///   - key: Identifies the upload across launches; default ``key(for:creationURL:)``. A stored
    ///     upload is resumed only when it was created at this uploader's ``creationURL``.
    ///   - metadata: `Upload-Metadata` pairs sent on creation. A key that is empty or holds a
    ///     space, a comma or a control character fails the upload with
    ///     `NetworkError.invalidRequest(_:)` before anything is sent (tus 1.0.0 "Upload-Metadata").
    /// - Returns: The running upload; its value is the upload URL. Progress counts the bytes the
    ///   server confirmed plus those of the chunk in flight, and starts at the resumed offset. The
    ///   upload fails with the file system's error (as a `NetworkError`) when its record in
    ///   ``store`` cannot be written after a chunk: a later run resumes from the offset the server
    ///   reports. It fails with ``ResumableUploadStoreError/recordUnreadable(path:reason:)``, before
    ///   anything is sent, when the stored record for `key` exists but cannot be read: the record
    ///   is left as it is rather than taken for none (which would start over from byte 0). Chunks
    ///   are read from the file itself, so the file must not change during the run: one whose size
    ///   or modification date changed fails the run with `NetworkError.invalidRequest(_:)` before
    ///   its next chunk (or instead of success after its last one) and its record is removed, so
    ///   no run resumes an upload that may mix two versions; a run that fails for another reason
    ///   (a lost connection) after the file changed removes its record too. To let the user edit the file while
    ///   it uploads, upload a copy (as ``UploadManager`` does). A second upload of the same `key`
    ///   while one runs in this process fails at once with `NetworkError.invalidRequest(_:)` and
    ///   sends nothing (two runs would create two uploads of one file).
    public func upload(fileAt fileURL: URL, key: String? = nil, metadata: [String: String] = [:]) -> Upload<URL> {
        let (progress, continuation) = AsyncStream.makeStream(of: TransferProgress.self, bufferingPolicy: .bufferingNewest(1))
        let size = FileSize.of(fileURL)
        let tracker = UploadProgressTracker(knownTotal: size, continuation: continuation)
        let environment = client.environment
        let creation = TransferURL.resolve(creationPath, against: environment.baseURL)
        let session = TusSession(
            uploader: self, fileURL: fileURL,
            key: key ?? creation.map { Self.key(for: fileURL, creationURL: $0) } ?? Self.key(for: fileURL),
            metadata: metadata, creationURL: creation, environment: environment, storeResets: store.resetCount())
        let (store, key) = (store, session.key)
        let task = Task {
            do {
                // One run per key at a time (a user tapping "upload" twice): two would create two
                // uploads of the same file.
                guard store.claimRun(of: key) else {
                    throw NetworkError.invalidRequest(
                        "an upload of '\(fileURL.lastPathComponent)' under the same key is already running")
                }
                defer { store.endRun(of: key) }
                let response = try await session.run(tracker: tracker)
                tracker.finish(sentTotal: nil)
                return response
            } catch let error as ResumableUploadStoreError {
                tracker.fail()
                throw error
            } catch {
                tracker.fail()
                throw NetworkError(error)
            }
        }
        return Upload(progress: progress, task: task)
    }

    /// The path template metrics group an upload URL under: the server's upload URLs differ per
    /// upload (`https://host/files/24e5…`), so the last segment becomes `{upload}`.
    static func metricsTemplate(_ path: String) -> String {
        guard path.contains("://"), let url = URL(string: path), url.pathComponents.count > 1 else { return path }
        return url.deletingLastPathComponent().path + "/{upload}"
    }

    /// Sends one tus request with the raw status returned (409, 404, 410 are steps, not errors).
    /// `signIn` holds the sign-in of the run's first request that carried a token: the later ones
    /// go out only under it (else ``NetworkError/signedOut``, nothing sent), so the rest of one
    /// user's file never goes out with another user's token. Every request goes out only while the
    /// client points at `environment`, the run's (else `NetworkError.invalidRequest(_:)`, nothing
    /// sent): after a switch, the upload URL of the first environment would get the next one's
    /// token.
    func send(
        _ method: HTTPMethod, _ path: String, headers: [(String, String)], body: RequestBody = .none,
        progress: TransferProgressReporter? = nil, signIn: Locked<Int?>, environment: String
    ) async throws -> Response<HTTPResponse> {
        // Neither a PATCH nor the creation POST is ever sent twice below the session (the retry
        // step, or the transport on a reused connection), which an idempotency key would allow: a
        // tus server does not know the key. The bytes of a broken PATCH may have reached it in
        // part, and a repeat at the same offset meets 409; the session asks HEAD and goes on from
        // the server's offset instead. A repeated creation makes a second upload, the first left
        // on the server.
        let policy = method == .patch || method == .post ? policy.with(\.idempotency, .none) : policy
        var fields = HTTPHeaders()
        fields.replace("Tus-Resumable", with: Self.version)
        for (name, value) in headers { fields.replace(name, with: value) }
        let request = Request<HTTPResponse>.raw(method, path, headers: fields, body: body, policy: policy)
        let context = RequestContext(
            requestID: RequestID(), policy: policy, method: method,
            pathTemplate: request.pathTemplate ?? Self.metricsTemplate(path),
            statusValidation: request.statusValidation, startedAt: .now, onStart: nil,
            traits: CallTraits(transferProgress: progress))
        if let session = signIn.current { context[SignInRequirementKey.self] = SignInRequirement(session: session) }
        let response: Response<HTTPResponse>
        do {
            response = try await client.response(for: request, context: context, requiredEnvironment: environment)
        } catch is SignInMismatch {
            throw NetworkError.signedOut
        } catch let mismatch as EnvironmentMismatch {
            throw NetworkError.invalidRequest("this tus upload was \(mismatch): nothing more of it is sent")
        }
        if let session = response.context[SignInSessionKey.self] {
            signIn.withLock { pinned in pinned = pinned ?? session }
        }
        return response
    }
}
