import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Uploads that outlive a screen: files are staged (copied into a folder the app owns), recorded
/// in a persisted registry, sent in the foreground through the client's pipeline or in the
/// background through a ``BackgroundTransport``, and their staged copies removed once done,
/// failed or abandoned.
///
/// ```swift
/// let uploads = try UploadManager(client: client, directory: appSupport.appendingPathComponent("uploads"),
///                             backgroundTransport: URLSessionBackgroundTransport(identifier: "com.example.uploads"))
/// let id = try await uploads.enqueue(fileAt: pickedURL, to: "/photos", contentType: "image/jpeg", mode: .background)
/// let response = try await uploads.result(for: id)      // waits; also after a relaunch
/// ```
///
/// At launch create the manager (and its background transport) once and call
/// ``resumePending()``: finished background tasks are matched to their records through their
/// `taskDescription`, foreground uploads the previous process did not finish are sent again, and
/// staged files no record refers to (a crash between staging and recording) are removed.
///
/// Only a 2xx answer completes an upload. A foreground upload that fails on the network after its
/// policy's retries (offline, timed out, connection lost, a status the policy retries such as 503)
/// stays pending with its staged copy: ``result(for:)`` throws
/// that failure, and the next ``resumePending()`` — at launch, or when the app sees the network
/// come back — sends it again. Only a failure the policy would not retry (a 4xx, a refused
/// request) fails it for good and removes the copy. An upload that is not safe to repeat (a
/// `POST` or `PATCH` sent without an `Idempotency-Key`, policy `IdempotencyPolicy.none`) is
/// never sent again after the server may have received it: a lost connection, a timeout or a
/// 5xx other than 503 fails it for good, as the client's retries would not repeat it either
/// (RFC 9110 §9.2.2); only a failure that left it unhandled (no connection, 408, 429, 503)
/// keeps it pending. Its sending is written to the registry before it goes out, so a relaunch
/// after the app ended mid-upload fails it (`URLError.networkConnectionLost`: the server may
/// have it) instead of sending it again.
///
/// A foreground upload sent again carries the same `Idempotency-Key` as the first time (with the
/// policy's `IdempotencyPolicy.automatic` key, the default: the key is the record's ``UploadRecord/id``),
/// so a server that honours the key does not store a file twice when the previous process ended
/// after the server had it but before its outcome was recorded.
///
/// Several managers may share one folder — an app and its share extension, each with its own
/// manager on the app group's container. The registry keeps every manager's records and names the
/// manager sending each upload (its process and the manager). Another manager's ``resumePending()``
/// leaves an upload alone while its sender is alive — it neither sends it a second time nor fails
/// it — and its ``result(for:)`` throws `NetworkError.invalidRequest(_:)` saying so until the outcome
/// is in the registry. An upload whose sender ended (its process is gone) goes out with the next
/// ``resumePending()`` of any manager on the folder; so does one whose manager was released, which
/// stops the foreground uploads it was sending (as the end of its process would). No file lock is
/// held while an upload runs (iOS terminates a process suspended while it holds one in an app
/// group's container).
public actor UploadManager: ResultWaiting {
    private nonisolated let executor = BlockingWorkExecutor(label: "courier.upload-manager")
    /// Runs the manager's file work (staging copies, multipart bodies written to disk, the
    /// registry) off Swift's cooperative pool: a 1 GB copy would hold one of its threads for seconds.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private let client: APIClient
    private let staging: StagingStore
    /// This manager as the registry names the sender of an upload (see ``UploadSender``).
    private nonisolated let sender = UploadSender.begin()
    /// Staged copies of settled uploads, removed once the registry carrying their outcome is
    /// written.
    private var settledStagedFiles: Set<String> = []
    private let registry: UploadRegistry
    private let background: (any BackgroundTransport)?
    private let policy: EndpointPolicy
    private var records: [UUID: UploadRecord]
    /// The records as this manager last loaded or wrote them: what it changed since is what its
    /// next write applies over the file (another manager on the folder may have written since).
    private var writtenRecords: [UUID: UploadRecord]
    /// The tasks awaiting each upload's ``result(for:)``, each under a token of its own.
    var waiters: [UUID: [ResultWait<HTTPResponse>]] = [:]
    private var responses: [UUID: HTTPResponse] = [:]
    /// Failures of this launch, so a late ``result(for:)`` gets the same error as a waiting one.
    private var failures: [UUID: NetworkError] = [:]
    private var running: [UUID: Upload<HTTPResponse>] = [:]
    /// The progress of each running foreground upload, for any number of readers.
    private var progress: [UUID: ProgressFanOut] = [:]
    /// Foreground uploads of this launch kept pending after a failure their policy would retry:
    /// the failure, until they are sent again.
    private var interrupted: [UUID: NetworkError] = [:]
    private var listener: Task<Void, Never>?
    /// The access token each background upload of this launch was handed to the system with.
    private var sentTokens: [UUID: (token: String, session: Int)] = [:]
    /// Background uploads already handed over again after a 401 (once each).
    private var reauthorized: Set<UUID> = []
    /// Background uploads answered 401 whose new hand-over could not be signed yet (the token
    /// store unreadable, the refresh offline): handed over by the next ``resumePending()``.
    private var awaitingReauthorization: Set<UUID> = []

    /// Adds header fields to a background upload's request (e.g. `Authorization`), which is built
    /// once when it is enqueued: a background session runs no interceptors. `nil`: none.
    public let prepareBackgroundRequest: (@Sendable (inout URLRequest) async throws -> Void)?
    /// Signs background uploads: right before each is handed to the system its
    /// `Authorization: Bearer` field is set from `TokenManager.validAccessToken()` — refreshed
    /// first when the token expires within the manager's leeway — and an upload the server
    /// answers 401 (the system started it after the token expired) is handed over once more with
    /// a refreshed token. `nil`: background uploads carry only the fields set elsewhere. It must be
    /// the token manager the client's current environment authenticates with (when its pipeline
    /// has one): after an environment switch an upload would otherwise carry the other
    /// environment's token, so its hand-over fails with `NetworkError.invalidRequest(_:)` instead.
    public let tokenManager: TokenManager?
    /// The account signed in now (an id the app chooses), or `nil` when nobody is, or when the
    /// app does not tell accounts apart (the default): recorded with each upload
    /// (``UploadRecord/account``). An upload of another account than the current one is never
    /// sent: ``resumePending()`` leaves it pending, a send that finds another sign-in when its
    /// token is attached sends nothing, and a background upload answered 401 is not handed over
    /// again; each waits (``result(for:)`` throws `NetworkError.signedOut`) until its account is
    /// current again. As with the offline queue's `account`, report `nil` before another user's
    /// tokens are signed in, and the new user once they are.
    public let account: @Sendable () -> String?

    /// Creates a manager whose staging folder and registry live in `directory`.
    ///
    /// - Parameters:
    ///   - client: Sends foreground uploads (its pipeline) and resolves paths against its environment.
    ///     A foreground upload is sent only while the client points at the environment it was
    ///     enqueued in: after a switch it stays pending (``result(for:)`` throws
    ///     `NetworkError.invalidRequest(_:)` saying so) until ``resumePending()`` finds that
    ///     environment current again.
    ///   - directory: An app-owned folder (Application Support, not Caches: staged files must stay).
    ///   - backgroundTransport: Runs ``UploadMode/background`` uploads; without one they fail.
    ///   - policy: The policy of foreground uploads; default `EndpointPolicy.authorizedUpload`,
    ///     which requires an authorization interceptor in the client's pipeline (a client without
    ///     one fails each upload with `NetworkError.missingInterceptor(_:)`): for an API without
    ///     auth, pass `.authorizedUpload.with(\.auth, .none)`.
    ///   - prepareBackgroundRequest: See ``prepareBackgroundRequest``.
    ///   - tokenManager: See ``tokenManager``.
    ///   - account: See ``account``.
    /// - Throws: ``UploadManagerError/registryUnreadable(path:reason:)`` when the registry exists
    ///   but cannot be read or decoded. Nothing is changed then: starting empty would sweep every
    ///   staged file at ``resumePending()`` and overwrite the registry at the next change.
    public init(
        client: APIClient, directory: URL, backgroundTransport: (any BackgroundTransport)? = nil,
        policy: EndpointPolicy = .authorizedUpload,
        prepareBackgroundRequest: (@Sendable (inout URLRequest) async throws -> Void)? = nil,
        tokenManager: TokenManager? = nil, account: @escaping @Sendable () -> String? = { nil }
    ) throws {
        self.client = client
        self.staging = StagingStore(directory: directory.appendingPathComponent("staged", isDirectory: true))
        self.registry = UploadRegistry(
            file: directory.appendingPathComponent("uploads.json"), name: "an upload registry", datesAsISO8601: true,
            unreadable: { .registryUnreadable(path: $0, reason: $1) }, unwritable: { .registryUnwritable(path: $0, reason: $1) })
        self.background = backgroundTransport
        self.policy = policy
        self.prepareBackgroundRequest = prepareBackgroundRequest
        self.tokenManager = tokenManager
        self.account = account
        self.records = try registry.load()
        self.writtenRecords = records
    }

    deinit {
        // Its uploads are another manager's to resume from now on, as after the end of its process:
        // its foreground sendings stop too. Going on, each would be a second sending beside the next
        // manager's, and its outcome would reach no registry.
        for upload in running.values { upload.cancel() }
        sender.end()
    }

    /// Every upload in the registry, oldest first.
    public var uploads: [UploadRecord] { UploadRecord.oldestFirst(records) }

    // MARK: Enqueueing

    /// Copies the file at `fileURL` into the staging folder, records the upload and starts it.
    ///
    /// - Parameters:
    ///   - fileURL: The user's file; later changes to it do not affect the upload.
    ///   - path: Relative to the client's base URL, or an absolute URL.
    ///   - method: The request method; `POST` by default.
    ///   - contentType: The body's media type.
    ///   - headers: More header fields.
    ///   - mode: Foreground (the pipeline) or background (the ``BackgroundTransport``).
    /// - Returns: The upload's identifier.
    /// - Throws: The file system's error when the file cannot be copied; `NetworkError.invalidRequest(_:)`
    ///   for a bad path; ``UploadManagerError/registryUnwritable(path:reason:)`` when the registry
    ///   cannot record it (nothing is kept); for a background upload, the token manager's or the
    ///   background session's error when it cannot be handed over (the upload is failed).
    public func enqueue(
        fileAt fileURL: URL, to path: String, method: HTTPMethod = .post, contentType: String,
        headers: [String: String] = [:], mode: UploadMode = .foreground
    ) async throws -> UUID {
        let name = try staging.stage(copying: fileURL)
        return try await record(name, path: path, method: method, contentType: contentType, headers: headers, mode: mode)
    }

    /// Writes `form`'s body into the staging folder (a file, as a background session needs),
    /// records the upload and starts it.
    ///
    /// - Throws: See ``enqueue(fileAt:to:method:contentType:headers:mode:)``; ``MultipartFormError``.
    public func enqueue(
        _ form: MultipartForm, to path: String, method: HTTPMethod = .post, headers: [String: String] = [:],
        mode: UploadMode = .foreground
    ) async throws -> UUID {
        let name = try staging.stage(form)
        return try await record(name, path: path, method: method, contentType: form.contentType, headers: headers, mode: mode)
    }

    private func record(
        _ name: String, path: String, method: HTTPMethod, contentType: String, headers: [String: String], mode: UploadMode
    ) async throws -> UUID {
        let environment = client.environment
        guard
            let url = TransferURL.resolve(path, against: environment.baseURL)
        else {
            staging.remove(name)
            throw NetworkError.invalidRequest("'\(path)' is not a valid upload path")
        }
        var fields = headers
        fields["Content-Type"] = contentType
        var record = UploadRecord(
            id: UUID.random(), method: method.rawValue, url: url, headers: fields, stagedFileName: name, mode: mode,
            state: .pending, createdAt: Date())
        record.account = account()
        record.environment = environment.id
        record.sender = sender
        records[record.id] = record
        do {
            try saveRegistry()
        } catch {
            records[record.id] = nil
            staging.remove(name)
            throw error
        }
        do {
            try await start(record)
        } catch {
            // Not handed over (no access token, the background session refused it): failed now,
            // never pending with nothing behind it (``result(for:)`` would wait forever).
            fail(record.id, error)
            throw error
        }
        return record.id
    }

    /// The policy of one foreground upload: an automatic `Idempotency-Key` becomes the record's
    /// id, so every sending of the same upload — after a relaunch found it pending because the
    /// app ended, or because the outcome could not be written, before the outcome was stored —
    /// carries the same key, and a server that honours the key stores the file once.
    static func policy(_ policy: EndpointPolicy, for record: UploadRecord) -> EndpointPolicy {
        guard case .automatic = policy.idempotency else { return policy }
        var keyed = policy
        keyed.idempotency = .key(record.id.uuidString)
        return keyed
    }

    // MARK: Running

    /// Starts `record`; `reauthorizing` after the server answered its background upload 401.
    private func start(_ record: UploadRecord, reauthorizing: Bool = false) async throws {
        let file = staging.url(of: record.stagedFileName)
        switch record.mode {
        case .foreground:
            if !Self.mayRepeat(record, policy: policy) {
                // Sent at most once: an earlier process that began sending it may have ended after
                // the server stored it, and this sending is recorded before it goes out.
                guard record.sendMayHaveBegun != true else { throw Self.outcomeUnknown }
                var started = record
                started.sendMayHaveBegun = true
                records[record.id] = started
                do { try saveRegistry() } catch {
                    records[record.id] = record
                    throw error
                }
            }
            var headers = HTTPHeaders()
            for (name, value) in record.headers { headers.replace(name, with: value) }
            let request = Request<HTTPResponse>.raw(
                HTTPMethod(rawValue: record.method), record.url.absoluteString, headers: headers,
                body: .file(file, contentType: record.headers["Content-Type"] ?? "application/octet-stream"),
                policy: Self.policy(policy, for: record))
            let upload = client.upload(
                request, requiredEnvironment: record.environment, requiredSignIn: signInRequirement(for: record))
            running[record.id] = upload
            progress[record.id] = ProgressFanOut.forward(upload.progress)
            interrupted[record.id] = nil
            let id = record.id
            Task { [weak self] in
                do {
                    let response = try await upload.value
                    // As for background uploads: only a 2xx completes it (the request accepts
                    // every status, so that it is the manager that decides).
                    guard (200..<300).contains(response.statusCode) else { throw NetworkError(response: response) }
                    await self?.finish(id, response: response)
                } catch {
                    let followedRedirect = !(upload.context?.redirects.isEmpty ?? true)
                    await self?.foregroundAttemptFailed(id, error, followedRedirect: followedRedirect)
                }
            }
        case .background:
            guard let background else {
                fail(record.id, NetworkError.invalidRequest("no background transport for a background upload"))
                return
            }
            listen(to: background)
            var request = BackgroundHandOver.request(to: record.url, method: record.method, headers: record.headers)
            try await prepareBackgroundRequest?(&request)
            // A presigned storage URL gets no token (its signature is its credential).
            if let tokenManager = try BackgroundHandOver.signer(tokenManager, for: record.url, client: client) {
                // Fresh at hand-over: the system may start the task much later, and no
                // interceptor runs then.
                let authorization: (token: String, session: Int)?
                if reauthorizing, let sent = sentTokens[record.id] {
                    // The file was sent as the user of that sign-in: after another sign-in (or a
                    // sign-out) it must not go again as whoever is signed in now.
                    guard let fresh = try await tokenManager.refresh(failedToken: sent.token, session: sent.session) else {
                        throw NetworkError.signedOut
                    }
                    authorization = (fresh, sent.session)
                } else if reauthorizing {
                    // Handed over by an earlier launch: the token it carried is unknown here.
                    _ = try await tokenManager.refresh(failedToken: nil)
                    authorization = try await tokenManager.accessTokenAndSession()
                } else {
                    authorization = try await tokenManager.accessTokenAndSession()
                }
                if let authorization {
                    request.setValue("Bearer \(authorization.token)", forHTTPHeaderField: "Authorization")
                    sentTokens[record.id] = authorization
                }
            }
            try background.startUpload(request, fromFile: file, taskDescription: record.id.uuidString)
        }
    }

    private func listen(to transport: any BackgroundTransport) {
        guard listener == nil else { return }
        listener = Task { [weak self] in
            for await event in transport.events {
                await self?.handle(event)
            }
        }
    }

    private func handle(_ event: BackgroundTransferEvent) async {
        guard let id = UUID(uuidString: event.taskDescription), let record = records[id] else { return }
        switch event.outcome {
        case .uploaded(401, _, _) where tokenManager != nil && !reauthorized.contains(id):
            reauthorized.insert(id)
            await reauthorize(record)
        case .uploaded(let status, let headers, let body):
            let response = HTTPResponse(statusCode: status, headers: headers, body: body, url: records[id]?.url)
            if (200..<300).contains(status) {
                finish(id, response: response)
            } else {
                fail(id, NetworkError(response: response))
            }
        case .downloaded(_, let file):
            try? FileManager.default.removeItem(at: file)
        case .failed(let error):
            fail(id, NetworkError(error))
        }
    }

    /// Hands `record` over once more after its 401, with a refreshed token. After a switch to
    /// another environment than the upload's, it stays pending until ``resumePending()`` finds that
    /// environment current again (`result(for:)` throws `NetworkError.invalidRequest(_:)` saying
    /// so). When the token cannot
    /// be had now — the store unreadable (a Keychain before the first unlock), the refresh offline
    /// or refused for a while (``waitsToReauthorize(_:retry:)``) — the upload stays pending with its
    /// staged copy: those waiting get the failure, and the next ``resumePending()`` tries again.
    /// Any other failure (signed out, the refresh token revoked) fails it.
    private func reauthorize(_ record: UploadRecord) async {
        guard isCurrentAccount(record) else {
            waitForAccount(record.id)
            awaitingReauthorization.insert(record.id)
            return
        }
        if let mismatch = environmentMismatch(of: record) {
            // Signed only by its own environment's token manager: handed over again there.
            waitForEnvironment(record.id, mismatch)
            awaitingReauthorization.insert(record.id)
            return
        }
        do {
            try await start(record, reauthorizing: true)
        } catch {
            let failure = NetworkError(error)
            guard Self.waitsToReauthorize(failure, retry: policy.retry), records[record.id]?.state == .pending else {
                fail(record.id, error)
                return
            }
            awaitingReauthorization.insert(record.id)
            interrupted[record.id] = failure
            settleWaits(of: record.id, with: .failure(failure))
        }
    }

    /// Whether a re-authorization that failed with `failure` may succeed later: the token store
    /// could not be read now (anything but ``TokenStoreError/corrupted(_:)``), or the refresh did
    /// not reach the server or was asked to come back later (``waitsForNetwork(_:retry:)``).
    static func waitsToReauthorize(_ failure: NetworkError, retry: RetryPolicy) -> Bool {
        if case .tokenStoreFailed(let storeFailure) = failure {
            if case .corrupted = storeFailure { return false }
            return true
        }
        return waitsForNetwork(failure, retry: retry)
    }

    private func finish(_ id: UUID, response: HTTPResponse) {
        guard var record = records[id] else { return }
        record.state = .completed(statusCode: response.statusCode)
        settle(record, with: .success(response))
    }

    /// A foreground upload's attempt ended without a response its policy accepts. A failure the
    /// policy would retry (offline, timed out, connection lost, a retryable status) after its
    /// retries: the upload stays pending with its staged copy — those waiting now get the failure,
    /// and ``resumePending()`` (at launch, or when the network is back) sends it again, with the
    /// same `Idempotency-Key`. An upload that may not be repeated (a `POST` or `PATCH` without a
    /// key) stays pending only when the server cannot have handled it (`leftTheRequestUnhandled`):
    /// after a lost connection or a timeout the server may have stored it, and sending it again
    /// would store it twice; so also after a redirect (a `303` answered to the stored upload, then
    /// a target that cannot be reached): the first hop had the request. Anything else fails it
    /// for good.
    private func foregroundAttemptFailed(_ id: UUID, _ error: any Error, followedRedirect: Bool = false) {
        if error is SignInMismatch, records[id]?.state == .pending {
            // Another sign-in than the upload's when its token was to be attached: nothing sent.
            markUnsent(id)
            waitForAccount(id)
            return
        }
        if let mismatch = error as? EnvironmentMismatch, records[id]?.state == .pending {
            // The client points at another environment than the upload's: nothing sent.
            markUnsent(id)
            waitForEnvironment(id, mismatch)
            return
        }
        let failure = NetworkError(error)
        guard let record = records[id], record.state == .pending, Self.waitsForNetwork(failure, retry: policy.retry),
            Self.mayRepeat(record, policy: policy) || (!followedRedirect && Self.leftTheRequestUnhandled(failure))
        else {
            fail(id, error)
            return
        }
        markUnsent(id)
        running[id] = nil
        progress[id] = nil
        interrupted[id] = failure
        settleWaits(of: id, with: .failure(failure))
    }

    /// Upload `id` waits again, unsent: the record of a sending the server never handled is cleared
    /// (see ``UploadRecord/sendMayHaveBegun``: the next sending is the first that may reach it), and
    /// this manager is no longer its sender, so that the next ``resumePending()`` of any manager on
    /// the folder may send it. One registry write, when either changed.
    private func markUnsent(_ id: UUID) {
        guard var record = records[id] else { return }
        let before = record
        if record.sendMayHaveBegun == true { record.sendMayHaveBegun = false }
        if record.sender == sender { record.sender = nil }
        guard record != before else { return }
        records[id] = record
        persistRegistry()
    }

    /// The failure of an upload that is not safe to repeat and that an earlier process began
    /// sending: whether the server stored it is unknown, as after a connection lost mid-request.
    static let outcomeUnknown = NetworkError.transport(URLError(.networkConnectionLost))

    /// Whether `record` may go out now: it belongs to no account, or to the current one.
    private func isCurrentAccount(_ record: UploadRecord) -> Bool {
        guard let owner = record.account else { return true }
        return account() == owner
    }

    /// What ties a foreground upload's send to its account (`nil` for an upload of no account).
    private func signInRequirement(for record: UploadRecord) -> SignInRequirement? {
        guard let owner = record.account else { return nil }
        let current = account
        return SignInRequirement { current() == owner }
    }

    /// Upload `id` stays pending for its account, which is not the current one: those waiting
    /// get `NetworkError.signedOut`; a later ``resumePending()`` sends it once it is.
    private func waitForAccount(_ id: UUID) {
        running[id] = nil
        progress[id] = nil
        interrupted[id] = .signedOut
        settleWaits(of: id, with: .failure(NetworkError.signedOut))
    }

    /// Why `record` may not go out now: the client points at another environment than the one it
    /// was enqueued in (`nil` when it is that one, or the record names none). The send itself
    /// checks again (`APIClient.upload(_:requiredEnvironment:requiredSignIn:)`).
    private func environmentMismatch(of record: UploadRecord) -> EnvironmentMismatch? {
        let current = client.environment.id
        guard let required = record.environment, required != current else { return nil }
        return EnvironmentMismatch(required: required, current: current)
    }

    /// Upload `id` stays pending for its environment, which is not the client's current one:
    /// those waiting get `NetworkError.invalidRequest(_:)` saying so; a later ``resumePending()``
    /// sends it once the app is back in that environment.
    private func waitForEnvironment(_ id: UUID, _ mismatch: EnvironmentMismatch) {
        running[id] = nil
        progress[id] = nil
        let failure = NetworkError.invalidRequest("this upload was \(mismatch): it waits until that environment is current again")
        interrupted[id] = failure
        settleWaits(of: id, with: .failure(failure))
    }

    /// Whether an upload that ended with `failure` is worth sending again later: the network was
    /// not there or gave out (offline, timed out, a lost or refused connection, no name
    /// resolution), or the server asked for later (a status `retry` retries: 429, 502, 503, 504 by
    /// default), or nothing could be sent for a while (`backendUnavailable`: the client's circuit
    /// breaker, or the token manager holding refreshes back after its token endpoint failed). A
    /// refusal (4xx), a TLS failure or a cancellation is final.
    static func waitsForNetwork(_ failure: NetworkError, retry: RetryPolicy) -> Bool {
        switch failure {
        case .offline, .timedOut, .backendUnavailable: return true
        case .transport(let error): return transientCodes.contains(error.code)
        default: return failure.statusCode.map(retry.isRetryable(statusCode:)) ?? false
        }
    }

    /// Whether sending `record` again cannot make the server store it twice: its method is
    /// idempotent (RFC 9110 §9.2.2), or it carries an `Idempotency-Key` (the policy's, which is
    /// the same on every sending, or one of the record's header fields).
    static func mayRepeat(_ record: UploadRecord, policy: EndpointPolicy) -> Bool {
        if HTTPMethod(rawValue: record.method).isIdempotent { return true }
        if policy.idempotency != .none { return true }
        return record.headers.contains { name, value in
            name.caseInsensitiveCompare(TransportResendRule.idempotencyKeyField) == .orderedSame
                && value.utf8.contains { $0 != 0x20 && $0 != 0x09 }
        }
    }

    /// Whether `failure` says the server did not handle the request: it never reached a server
    /// (no network, no connection, no name resolution, nothing sent while the client held calls
    /// back), or the server answered that it did not handle it (408, 429, 503). A lost connection,
    /// a timeout or another status may come after the server stored the upload.
    static func leftTheRequestUnhandled(_ failure: NetworkError) -> Bool {
        switch failure {
        case .offline, .backendUnavailable: return true
        case .transport(let error): return unsentCodes.contains(error.code)
        default: return [408, 429, 503].contains(failure.statusCode ?? 0)
        }
    }

    /// The retry step's proof that a request never left the device, and the codes of no network
    /// path at all.
    private static let unsentCodes = RetryInterceptor.neverSentErrorCodes.union([
        .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed, .callIsActive,
    ])

    private static let transientCodes: Set<URLError.Code> = [
        .networkConnectionLost, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .timedOut,
        .notConnectedToInternet, .internationalRoamingOff, .dataNotAllowed, .callIsActive,
    ]

    private func fail(_ id: UUID, _ error: any Error) {
        guard var record = records[id] else { return }
        let failure = NetworkError(error)
        record.state = .failed(failure.localizedDescription)
        settle(record, with: .failure(failure))
    }

    private func settle(_ record: UploadRecord, with result: Result<HTTPResponse, any Error>) {
        // The staged copy goes once the outcome is on disk: were it removed first and the write
        // failed, a relaunch would find the upload pending with no file to send it again from
        // (under its Idempotency-Key) and fail an upload the server stored.
        settledStagedFiles.insert(record.stagedFileName)
        records[record.id] = record
        running[record.id] = nil
        progress[record.id] = nil
        interrupted[record.id] = nil
        sentTokens[record.id] = nil
        reauthorized.remove(record.id)
        awaitingReauthorization.remove(record.id)
        // A failed write keeps the outcome in memory for this launch; the next change rewrites
        // the whole registry and carries it (until then a relaunch finds the upload pending).
        persistRegistry()
        switch result {
        case .success(let response): responses[record.id] = response
        case .failure(let error): failures[record.id] = NetworkError(error)
        }
        settleWaits(of: record.id, with: result)
    }

    // MARK: Results, cancellation, launch

    /// Waits for the upload `id` and returns the server's response (2xx).
    ///
    /// - Throws: `NetworkError`: the upload's failure — for an upload kept pending after a network
    ///   failure (or a re-authorization that could not be signed yet), that failure at once, until
    ///   ``resumePending()`` sends it again;
    ///   `NetworkError.invalidRequest(_:)` for an unknown id, and at once for a pending upload
    ///   another manager on the folder sends (also before this manager's ``resumePending()``; a
    ///   background one is in that manager's background session, whose events never reach this
    ///   manager) until its outcome is in the registry. A response received by an earlier
    ///   launch is not kept: its record says
    ///   ``TransferState/completed(statusCode:)``. `NetworkError.cancelled` when the awaiting task
    ///   is cancelled (the upload goes on; ask again later).
    public func result(for id: UUID) async throws -> HTTPResponse {
        if let record = records[id], record.state == .pending, running[id] == nil,
            interrupted[id] != nil || isAnotherManagersUpload(record)
        {
            // Perhaps settled by another manager on the folder: its outcome is in the registry.
            // Unreadable now, the record stays as this manager knows it.
            reloadRegistry()
        }
        guard let record = records[id] else { throw NetworkError.invalidRequest("no upload \(id)") }
        switch record.state {
        case .completed(let status):
            return responses[id] ?? HTTPResponse(statusCode: status, headers: HTTPHeaders(), body: Data(), url: record.url)
        case .failed(let message):
            throw failures[id] ?? NetworkError.invalidRequest(message)
        case .pending:
            // Waiting for the network: nothing would resume a waiter until resumePending().
            if running[id] == nil, let failure = interrupted[id] { throw failure }
            if running[id] == nil, isAnotherManagersUpload(record) {
                // That manager settles it (the events of a background one go to its session):
                // nothing here would end a wait.
                throw NetworkError.invalidRequest(
                    "upload \(id) is being sent by another manager on this folder (another process): ask again later")
            }
            return try await awaitResult(of: id)
        }
    }

    /// Progress of a foreground upload of this launch (`nil` for others): the latest value at
    /// once, then every later one, until the upload ends. Any number of readers each get every
    /// value.
    public func progress(for id: UUID) -> AsyncStream<TransferProgress>? { progress[id]?.subscribe() }

    /// Abandons the upload `id`: stops it, removes its staged file and its record.
    ///
    /// - Throws: ``UploadManagerError/registryUnwritable(path:reason:)`` when the registry
    ///   cannot be written: the upload is stopped and gone from ``uploads``, but a relaunch would
    ///   still find its record. `NetworkError.invalidRequest(_:)` for a pending upload another
    ///   live manager on the folder sends (see the type's documentation): this manager cannot stop it, and
    ///   changes nothing; cancel it there, or again once its outcome is in the registry.
    public func cancel(_ id: UUID) async throws {
        // Another manager on the folder may send it now, or have settled it: the registry says.
        if running[id] == nil { reloadRegistry() }
        guard let record = records[id] else { return }
        if running[id] == nil, record.state == .pending, !Self.mayTakeOver(record, as: sender) {
            throw NetworkError.invalidRequest(
                "upload \(id) is being sent by another manager on this folder (another process): cancel it there")
        }
        running[id]?.cancel()
        if record.mode == .background { await background?.cancelTask(withDescription: id.uuidString) }
        fail(id, NetworkError.cancelled)
        records[id] = nil
        try saveRegistry()
    }

    /// Removes the records of finished uploads (their staged files are already gone).
    ///
    /// - Throws: ``UploadManagerError/registryUnwritable(path:reason:)`` when the registry
    ///   cannot be written (the records are gone from ``uploads`` for this launch only).
    public func removeFinished() throws {
        records = records.filter { $0.value.state == .pending }
        try saveRegistry()
    }

    /// The last registry write that failed and that no later write has repaired: an upload
    /// finished or failed, but its outcome is only in memory (a relaunch would find it pending).
    /// `nil` once a write succeeds.
    public private(set) var registryFailure: UploadManagerError?

    /// Writes the registry — this manager's changes over the file as it is now, which another
    /// manager on the same folder may have written — and keeps the outcome in ``registryFailure``
    /// (cleared by a success). Returns the failure.
    @discardableResult
    private func persistRegistry() -> UploadManagerError? {
        let failure = registry.save(records, over: &writtenRecords, keepingOutcomeIn: &registryFailure)
        if failure == nil {
            for name in settledStagedFiles { staging.remove(name) }
            settledStagedFiles.removeAll()
        }
        return failure
    }

    /// Reads the registry again, for what other managers on the folder did since this one last
    /// read or wrote it (``RegistryFile/reload(_:base:)``); the uploads this manager is sending
    /// keep its own records. Returns the failure, or `nil`.
    @discardableResult
    private func reloadRegistry() -> UploadManagerError? {
        let mine = Set(running.keys)
        var kept: [UUID: UploadRecord] = [:]
        for id in mine { kept[id] = records[id] }
        do {
            try registry.reload(&records, base: &writtenRecords)
        } catch {
            return error
        }
        for id in mine { records[id] = kept[id] }
        return nil
    }

    /// Makes this manager the sender of those of the uploads `ids` that are still pending and whose
    /// sender, if any, has ended (``UploadSender``), in one locked read and write of the registry,
    /// and returns them; this manager's records are then read from the file. When the registry
    /// cannot be read or written, those of `ids` whose sender, as this manager last read the
    /// registry, is none, this manager or one that has ended are returned: sent rather than left
    /// unsent, but never beside a sender that is alive (the others wait for a later
    /// ``resumePending()``).
    private func becomeSender(of ids: [UUID]) -> Set<UUID> {
        guard !ids.isEmpty else { return [] }
        let sender = self.sender
        let unrecorded = { Set(ids.filter { self.records[$0].map { Self.mayTakeOver($0, as: sender) } ?? false }) }
        // This manager's own changes first, so that the file carries them.
        if records != writtenRecords, persistRegistry() != nil { return unrecorded() }
        var taken: Set<UUID> = []
        do {
            try registry.update { records in
                for id in ids {
                    guard var record = records[id], record.state == .pending else { continue }
                    guard Self.mayTakeOver(record, as: sender) else { continue }
                    if record.sender != sender {
                        record.sender = sender
                        records[id] = record
                    }
                    taken.insert(id)
                }
            }
        } catch {
            return unrecorded()
        }
        reloadRegistry()
        return taken
    }

    /// Whether `record` is an upload that another manager on the folder, still alive, sends — a
    /// background one handed to its background session, whose events reach that manager alone.
    private func isAnotherManagersUpload(_ record: UploadRecord) -> Bool {
        !Self.mayTakeOver(record, as: sender)
    }

    /// Whether `sender` may send `record` as far as its sender goes: it names none, `sender`, or
    /// one that has ended (``UploadSender/isAlive``).
    private static func mayTakeOver(_ record: UploadRecord, as sender: UploadSender) -> Bool {
        guard let other = record.sender, other != sender else { return true }
        return !other.isAlive
    }

    /// Ends this manager as other managers see it, as the end of its process would: for tests in
    /// which a second manager in the same process stands for the next launch while this one runs.
    package func endAsIfTheProcessEnded() {
        sender.end()
    }

    /// How long a staged file no record names is kept, in seconds: it may be another manager's,
    /// staged and not yet recorded (one hour; a crash's leftover goes at a later launch).
    package static let stagingGrace: TimeInterval = 3600

    /// Upload `id` is being sent by another manager on the folder (another process, or another
    /// manager of this one): those waiting here get `NetworkError.invalidRequest(_:)` saying so.
    /// Its outcome reaches the registry, where this manager reads it in ``result(for:)`` and
    /// ``resumePending()``.
    private func leaveToOtherManager(_ id: UUID) {
        let failure = NetworkError.invalidRequest(
            "upload \(id) is being sent by another manager on this folder (another process): ask again later")
        interrupted[id] = failure
        settleWaits(of: id, with: .failure(failure))
    }

    /// ``persistRegistry()``, throwing its failure.
    private func saveRegistry() throws(UploadManagerError) {
        if let failure = persistRegistry() { throw failure }
    }

    /// At launch: removes staged files no pending record refers to (a crash between staging and
    /// recording, an abandoned upload), starts listening for the background session's events
    /// (tasks of earlier launches included: matched to records by `taskDescription`), and sends
    /// pending foreground uploads again (except one that is not safe to repeat and that an
    /// earlier launch began sending: it fails, see the type's documentation). A background upload
    /// answered 401 whose new hand-over could not be signed then (the token store locked, the
    /// refresh offline) is handed over again now, in this launch. Any other pending background
    /// upload stays pending until its event arrives; one the session no longer knows (the user
    /// force-quit the app) can be abandoned with ``cancel(_:)`` and enqueued again.
    public func resumePending() async {
        // Other managers on the folder (an app extension) may have added, settled or removed
        // uploads since this one read the registry. When it cannot be read now, no staged file is
        // removed: which ones are leftovers is not known.
        let unread = reloadRegistry()
        let pending = records.values.filter { $0.state == .pending }
        if unread == nil {
            // A settled upload whose outcome is not on disk yet (the registry could not be written)
            // keeps its copy too: a relaunch before the next successful write finds it pending and
            // sends it again from that copy (see settle(_:with:)). So does a file staged within
            // the grace: it may be another manager's, staged and not yet recorded.
            staging.removeAll(
                except: Set(pending.map(\.stagedFileName)).union(settledStagedFiles),
                stagedBefore: Date().addingTimeInterval(-Self.stagingGrace))
        }
        if let background { listen(to: background) }
        var resumable: [UUID] = []
        for record in pending where record.mode == .foreground && running[record.id] == nil {
            guard isCurrentAccount(record) else {
                waitForAccount(record.id)
                continue
            }
            if let mismatch = environmentMismatch(of: record) {
                waitForEnvironment(record.id, mismatch)
                continue
            }
            resumable.append(record.id)
        }
        let mine = becomeSender(of: resumable)
        for id in resumable {
            guard mine.contains(id) else {
                leaveToOtherManager(id)
                continue
            }
            // As the registry has it now: another manager may have settled it since.
            guard let record = records[id], record.state == .pending, running[id] == nil else { continue }
            do {
                try await start(record)
            } catch let failure as UploadManagerError {
                // The registry could not record the sending: nothing was sent, it stays pending.
                interrupted[record.id] = NetworkError(failure)
            } catch {
                // An earlier process began sending it and it may not be repeated.
                fail(record.id, error)
            }
        }
        for record in pending where awaitingReauthorization.remove(record.id) != nil {
            interrupted[record.id] = nil
            await reauthorize(record)
        }
    }

    /// The pending background uploads the background session no longer runs (candidates for
    /// ``cancel(_:)`` and a new ``enqueue(fileAt:to:method:contentType:headers:mode:)``).
    public func orphanedBackgroundUploads() async -> [UploadRecord] {
        guard let background else { return [] }
        let running = Set(await background.runningTaskDescriptions())
        return uploads.filter { $0.mode == .background && $0.state == .pending && !running.contains($0.id.uuidString) }
    }
}
