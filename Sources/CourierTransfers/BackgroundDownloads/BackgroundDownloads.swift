import Courier
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads the system finishes while the app is suspended or terminated, matched to the app's
/// records after a relaunch, verified and moved into place with the same checks as
/// ``Courier/APIClient/download(_:to:resumingFrom:idleTimeout:)``.
///
/// Each download is a record in a registry (a JSON file in the manager's folder) whose identifier
/// is the background task's `taskDescription`, which the system persists with the task. When the
/// task ends — in this launch or, after a relaunch, when the recreated session delivers the events
/// of tasks started before — the manager finds the record and checks the file: a 2xx status, the
/// announced `Content-Length`, and the SHA-256 of `Repr-Digest`, `Content-Digest` or `Digest`
/// (RFC 9530) when the server sent one. Only a verified file is moved to the destination; a
/// failed one is deleted and the destination left untouched. A download that failed with resume
/// data (the system kept the bytes) can continue with ``resume(_:)``.
///
/// Give the manager a transport of its own (its own session identifier): a transport's
/// ``BackgroundTransport/events`` have one reader, so an ``UploadManager`` needs another.
///
/// The Apple background session is ``URLSessionBackgroundTransport``; the tests run the same
/// manager on Linux over an ordinary session. Wire `handleEventsForBackgroundURLSession` as for
/// uploads (see <doc:DownloadingInTheBackground>).
///
/// ```swift
/// let transport = URLSessionBackgroundTransport(identifier: "com.example.app.downloads")
/// let downloads = try BackgroundDownloads(client: client, directory: appSupport.appendingPathComponent("downloads"),
///                                         transport: transport, tokenManager: tokens)
/// await downloads.resumePending()
/// let id = try await downloads.enqueue("/videos/7", to: videoURL)
/// let file = try await downloads.result(for: id)      // waits; also after a relaunch
/// ```
public actor BackgroundDownloads: ResultWaiting {
    private nonisolated let executor = BlockingWorkExecutor(label: "courier.background-downloads")
    /// Runs the manager's file work (registry, verification, moves) off the cooperative pool.
    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    private let client: APIClient
    private let transport: any BackgroundTransport
    private let directory: URL
    private let registry: BackgroundDownloadRegistry
    /// Sets `Authorization: Bearer` right before each download is handed to the system, for a URL
    /// on one of the environment's origins only (a CDN or storage link gets no token).
    public let tokenManager: TokenManager?
    private var records: [UUID: BackgroundDownloadRecord]
    /// The records as this manager last loaded or wrote them: what it changed since is what its
    /// next write applies over the file (another manager on the folder may have written since).
    private var writtenRecords: [UUID: BackgroundDownloadRecord]
    /// The tasks awaiting each download's ``result(for:)``, each under a token of its own.
    var waiters: [UUID: [ResultWait<URL>]] = [:]
    private var failures: [UUID: any Error] = [:]
    /// Downloads whose resume data is being handed over (see ``resume(_:)``).
    private var resuming: Set<UUID> = []
    private var listeners: [Task<Void, Never>] = []
    /// The progress readers of each running download.
    private var progressReaders: [UUID: ProgressFanOut] = [:]

    /// Creates a manager whose registry lives in `directory`.
    ///
    /// - Parameters:
    ///   - client: Resolves paths against its environment.
    ///   - directory: An app-owned folder (Application Support, not Caches).
    ///   - transport: The background session (one per identifier, created at every launch).
    ///   - tokenManager: Signs each download to the environment's origins at hand-over; `nil`: no
    ///     `Authorization`. It must be the token manager the client's current environment
    ///     authenticates with (when its pipeline has one); otherwise, after an environment switch,
    ///     the hand-over fails with `NetworkError.invalidRequest(_:)` rather than send the other
    ///     environment's token.
    /// - Throws: ``BackgroundDownloadError/registryUnreadable(path:reason:)`` when the registry
    ///   exists but cannot be read (it is left as it is).
    public init(
        client: APIClient, directory: URL, transport: any BackgroundTransport, tokenManager: TokenManager? = nil
    ) throws {
        self.client = client
        self.transport = transport
        self.directory = directory
        self.registry = BackgroundDownloadRegistry(
            file: directory.appendingPathComponent("downloads.json"), name: "a download registry", datesAsISO8601: false,
            unreadable: { .registryUnreadable(path: $0, reason: $1) }, unwritable: { .registryUnwritable(path: $0, reason: $1) })
        self.tokenManager = tokenManager
        self.records = try registry.load()
        self.writtenRecords = records
    }

    /// Every download in the registry, oldest first.
    public var downloads: [BackgroundDownloadRecord] { BackgroundDownloadRecord.oldestFirst(records) }

    /// Records a download of `path` to `destination` and hands it to the system.
    ///
    /// - Parameters:
    ///   - path: Relative to the client's base URL, or an absolute URL.
    ///   - destination: A file URL; replaced only by a verified file.
    ///   - headers: More header fields.
    /// - Returns: The download's identifier.
    /// - Throws: `NetworkError.invalidRequest(_:)` for a bad path or destination;
    ///   ``BackgroundDownloadError/registryUnwritable(path:reason:)``; the token manager's error.
    public func enqueue(_ path: String, to destination: URL, headers: [String: String] = [:]) async throws -> UUID {
        guard let url = TransferURL.resolve(path, against: client.environment.baseURL) else {
            throw NetworkError.invalidRequest("'\(path)' is not a valid download path")
        }
        if let problem = Downloader<Request<Data>>.destinationProblem(destination) {
            throw NetworkError.invalidRequest(problem)
        }
        let record = BackgroundDownloadRecord(
            id: UUID.random(), url: url, headers: headers, destination: destination, state: .pending,
            resumeDataFileName: nil, createdAt: Date())
        records[record.id] = record
        do {
            try saveRegistry()
        } catch {
            records[record.id] = nil
            throw error
        }
        listen()
        do {
            try await handOver(record, resumeData: nil)
        } catch {
            // Nothing runs it: a record left pending would keep ``result(for:)`` waiting forever.
            settle(record.id, .failure(error))
            throw error
        }
        return record.id
    }

    /// Continues the failed download `id` from its resume data.
    ///
    /// The resume data is given up only once the session has taken the download: when the hand-over
    /// fails (no access token, the session refuses the data) the download stays failed with its
    /// resume data, and `resume(_:)` can be called again.
    ///
    /// - Throws: ``BackgroundDownloadError/notResumable(_:)`` without resume data (or while another
    ///   `resume(_:)` of the same download is handing it over);
    ///   ``BackgroundDownloadError/unknownDownload(_:)``; the token manager's or the transport's
    ///   error; ``BackgroundDownloadError/registryUnwritable(path:reason:)`` when the download
    ///   runs again but the registry cannot say so.
    public func resume(_ id: UUID) async throws {
        guard var record = records[id] else { throw BackgroundDownloadError.unknownDownload(id) }
        guard let name = record.resumeDataFileName, !resuming.contains(id) else {
            throw BackgroundDownloadError.notResumable(id)
        }
        let file = directory.appendingPathComponent(name)
        let data: Data
        do { data = try Data(contentsOf: file) } catch {
            throw BackgroundDownloadError.registryUnreadable(path: file.path, reason: "resume data: \(error)")
        }
        resuming.insert(id)
        defer { resuming.remove(id) }
        listen()
        try await handOver(record, resumeData: data)
        guard records[id] != nil else {
            // Cancelled while the token was fetched: the task just started is not wanted.
            await transport.cancelTask(withDescription: id.uuidString)
            throw DownloadError(.network(.cancelled))
        }
        record.state = .pending
        record.resumeDataFileName = nil
        records[id] = record
        failures[id] = nil
        try saveRegistry()
        try? FileManager.default.removeItem(at: file)
    }

    /// Waits for the download `id` and returns its destination.
    ///
    /// - Throws: The download's failure: ``DownloadError`` (status, length, digest, file system) or
    ///   `NetworkError`; ``BackgroundDownloadError/unknownDownload(_:)``; `NetworkError.cancelled`
    ///   when the awaiting task is cancelled (the download goes on; ask again later).
    public func result(for id: UUID) async throws -> URL {
        guard let record = records[id] else { throw BackgroundDownloadError.unknownDownload(id) }
        switch record.state {
        case .completed: return record.destination
        case .failed(let message): throw failures[id] ?? DownloadError(.fileSystem(message))
        case .pending:
            return try await awaitResult(of: id)
        }
    }

    /// Progress of the download `id` while it runs in this launch (bytes written; the total when
    /// the server announced it): the latest value at once, then every later one. Ends when the
    /// download ends. Any number of readers each get every value.
    public func progress(for id: UUID) -> AsyncStream<TransferProgress> {
        guard records[id]?.state == .pending else { return AsyncStream { $0.finish() } }
        listen()
        let readers = progressReaders[id] ?? ProgressFanOut()
        progressReaders[id] = readers
        return readers.subscribe()
    }

    /// At launch: starts pairing the session's events (those of tasks of earlier launches
    /// included) with the records.
    public func resumePending() {
        listen()
    }

    /// The pending downloads the session no longer runs (the user force-quit the app): cancel
    /// them with ``cancel(_:)`` and enqueue them again.
    public func orphanedDownloads() async -> [BackgroundDownloadRecord] {
        let running = Set(await transport.runningTaskDescriptions())
        return downloads.filter { $0.state == .pending && !running.contains($0.id.uuidString) }
    }

    /// Stops the download `id` and forgets it (its resume data too).
    ///
    /// - Throws: ``BackgroundDownloadError/registryUnwritable(path:reason:)`` when the registry
    ///   cannot be written: the download is stopped and gone from ``downloads``, but a relaunch
    ///   would still find its record.
    public func cancel(_ id: UUID) async throws {
        guard let record = records[id] else { return }
        await transport.cancelTask(withDescription: id.uuidString)
        if let name = record.resumeDataFileName {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
        settle(id, .failure(DownloadError(.network(.cancelled))))
        records[id] = nil
        try saveRegistry()
    }

    // MARK: Running

    private func handOver(_ record: BackgroundDownloadRecord, resumeData: Data?) async throws {
        var request = BackgroundHandOver.request(to: record.url, headers: record.headers)
        // A CDN or storage link taken from a response gets no token.
        if let signer = try BackgroundHandOver.signer(tokenManager, for: record.url, client: client),
            let token = try await signer.validAccessToken()
        {
            request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        }
        if let resumeData {
            try transport.startDownload(resumingWith: resumeData, taskDescription: record.id.uuidString)
        } else {
            try transport.startDownload(request, taskDescription: record.id.uuidString)
        }
    }

    private func listen() {
        guard listeners.isEmpty else { return }
        let events = transport.events
        let progress = transport.progress
        listeners = [
            Task { [weak self] in
                for await event in events { await self?.handle(event) }
            },
            Task { [weak self] in
                for await step in progress { await self?.report(step) }
            },
        ]
    }

    private func report(_ step: BackgroundTransferProgress) {
        guard let id = UUID(uuidString: step.taskDescription) else { return }
        progressReaders[id]?.publish(TransferProgress(completedBytes: step.completedBytes, totalBytes: step.totalBytes))
    }

    private func handle(_ event: BackgroundTransferEvent) {
        guard let id = UUID(uuidString: event.taskDescription), let record = records[id], record.state == .pending else {
            if case .downloaded(_, let file) = event.outcome { try? FileManager.default.removeItem(at: file) }
            return
        }
        switch event.outcome {
        case .downloaded(let status, let file):
            let response = HTTPResponse(statusCode: status, headers: event.responseHeaders, url: record.url)
            do {
                try BackgroundDownloadCheck.verify(file, response: response)
                try BackgroundDownloadCheck.move(file, to: record.destination)
                settle(id, .success(record.destination), status: status)
            } catch {
                try? FileManager.default.removeItem(at: file)
                settle(id, .failure(error))
            }
        case .uploaded:
            settle(id, .failure(DownloadError(.network(.transport(URLError(.badServerResponse))))))
        case .failed(let error):
            var resumeName: String?
            if let data = event.resumeData {
                let name = "\(id.uuidString).resume"
                do {
                    try AtomicFile.write(data, to: directory.appendingPathComponent(name), durable: true)
                    resumeName = name
                } catch {
                    resumeName = nil  // no resume data kept: the download starts over when enqueued again
                }
            }
            settle(id, .failure(DownloadError(.network(NetworkError(error)))), resumeDataFileName: resumeName)
        }
    }

    private func settle(
        _ id: UUID, _ result: Result<URL, any Error>, status: Int = 0, resumeDataFileName: String? = nil
    ) {
        guard var record = records[id] else { return }
        switch result {
        case .success: record.state = .completed(statusCode: status)
        case .failure(let error):
            record.state = .failed(String(describing: error))
            failures[id] = error
        }
        record.resumeDataFileName = resumeDataFileName
        records[id] = record
        if let failure = persistRegistry() { failures[id] = failures[id] ?? failure }
        let readers = progressReaders.removeValue(forKey: id)
        // The session's last progress report may come after its completion event: a completed
        // download's readers end at its size.
        if case .success(let file) = result,
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path))?[.size] as? NSNumber
        {
            readers?.publish(TransferProgress(completedBytes: size.int64Value, totalBytes: size.int64Value))
        }
        readers?.finish()
        settleWaits(of: id, with: result)
    }

    /// The last registry write that failed and that no later write has repaired: a download
    /// finished or failed, but its outcome is only in memory (a relaunch would find it pending,
    /// among ``orphanedDownloads()``). `nil` once a write succeeds.
    public private(set) var registryFailure: BackgroundDownloadError?

    /// Writes the registry — this manager's changes over the file as it is now, which another
    /// manager on the same folder may have written — and keeps the outcome in ``registryFailure``.
    /// Returns the failure.
    @discardableResult
    private func persistRegistry() -> BackgroundDownloadError? {
        registry.save(records, over: &writtenRecords, keepingOutcomeIn: &registryFailure)
    }

    /// ``persistRegistry()``, throwing its failure.
    private func saveRegistry() throws(BackgroundDownloadError) {
        if let failure = persistRegistry() { throw failure }
    }

}
