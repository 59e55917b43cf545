import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// A background "system" the test drives: it records hand-overs and finishes tasks on request,
/// as a relaunched session delivers events of tasks an earlier process started.
final class ManualBackgroundTransport: BackgroundTransport, @unchecked Sendable {
    // @unchecked: the mutable parts are in Locked boxes.
    let events: AsyncStream<BackgroundTransferEvent>
    let continuation: AsyncStream<BackgroundTransferEvent>.Continuation
    let progress: AsyncStream<BackgroundTransferProgress>
    let progressContinuation: AsyncStream<BackgroundTransferProgress>.Continuation
    let started = Locked<[(request: URLRequest?, resumeData: Data?, description: String)]>([])
    /// While set, every hand-over throws this error (the session refuses the task).
    let refusal = Locked<URLError?>(nil)

    init() {
        (events, continuation) = AsyncStream.makeStream(of: BackgroundTransferEvent.self)
        (progress, progressContinuation) = AsyncStream.makeStream(of: BackgroundTransferProgress.self)
    }

    func startUpload(_ request: URLRequest, fromFile fileURL: URL, taskDescription: String) throws {}
    func startDownload(_ request: URLRequest, taskDescription: String) throws {
        if let refusal = refusal.current { throw refusal }
        started.withLock { $0.append((request, nil, taskDescription)) }
    }
    func startDownload(resumingWith resumeData: Data, taskDescription: String) throws {
        if let refusal = refusal.current { throw refusal }
        started.withLock { $0.append((nil, resumeData, taskDescription)) }
    }
    func runningTaskDescriptions() async -> [String] { [] }
    func cancelTask(withDescription taskDescription: String) async {
        cancelled.withLock { $0.append(taskDescription) }
    }
    /// The tasks cancelled, in order.
    let cancelled = Locked<[String]>([])

    /// Finishes the task `description` with `body` in a system temporary file.
    func finish(_ description: String, body: Data, status: Int = 200, headers: HTTPHeaders) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("sys-\(UUID().uuidString)")
        try body.write(to: file)
        continuation.yield(
            BackgroundTransferEvent(
                taskDescription: description, outcome: .downloaded(statusCode: status, fileURL: file),
                responseHeaders: headers))
    }
}

@Suite("Background downloads: records, pairing after relaunch, verification, move into place")
struct BackgroundDownloadsTests {
    static let body = Data((0..<10_000).map { UInt8($0 % 251) })

    static func digestHeaders(_ data: Data, length: Int? = nil) -> HTTPHeaders {
        let digest = Data(SHA256.hash(data)).base64EncodedString()
        return HTTPHeaders([
            .init(name: "Content-Length", value: "\(length ?? data.count)"),
            .init(name: "Repr-Digest", value: "sha-256=:\(digest):"),
        ])
    }

    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("bgdl-\(UUID().uuidString)", isDirectory: true)
    }

    static func manager(_ folder: URL, _ transport: ManualBackgroundTransport) throws -> BackgroundDownloads {
        try BackgroundDownloads(
            client: TransfersFixture.client(StubTransport(responses: [HTTPResponse]())),
            directory: folder.appendingPathComponent("m"), transport: transport)
    }

    @Test("a task finished after a relaunch is paired with its record, verified and moved into place")
    func pairsAfterRelaunch() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("out/video.mov")
        let first = ManualBackgroundTransport()
        let id = try await Self.manager(folder, first).enqueue("/videos/7", to: destination)
        let handed = try #require(first.started.withLock { $0.first })
        #expect(handed.description == id.uuidString)
        #expect(handed.request?.url?.absoluteString == "https://api.example.test/v1/videos/7")

        // A new process: a new manager over the same folder, and the system's event for the old task.
        let relaunched = ManualBackgroundTransport()
        let manager = try Self.manager(folder, relaunched)
        await manager.resumePending()
        #expect(await manager.downloads.map(\.state) == [.pending])
        try relaunched.finish(id.uuidString, body: Self.body, headers: Self.digestHeaders(Self.body))
        #expect(try await manager.result(for: id) == destination)
        #expect(try Data(contentsOf: destination) == Self.body)
        #expect(await manager.downloads.map(\.state) == [.completed(statusCode: 200)])
    }

    /// A screen awaiting a download goes away: its wait ends with `NetworkError.cancelled` at once
    /// (it waited until the download finished, forever for one the session no longer runs), while
    /// the download and the other waiters go on.
    @Test("cancelling a task awaiting result(for:) ends its wait; the download and other waiters go on")
    func cancellingAResultWaitEndsIt() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("video.mov")
        let transport = ManualBackgroundTransport()
        let manager = try Self.manager(folder, transport)
        let id = try await manager.enqueue("/videos/7", to: destination)
        let leaving = Task { try await manager.result(for: id) }
        let staying = Task { try await manager.result(for: id) }
        leaving.cancel()

        let outcome = await TransfersFixture.firstOutcome(of: leaving, orAfter: .seconds(30))

        #expect(outcome == "cancelled")
        try transport.finish(id.uuidString, body: Self.body, headers: Self.digestHeaders(Self.body))
        #expect(try await staying.value == destination)
    }

    /// Two screens show one download's progress: each reads it to the end, which for a completed
    /// download is its size. A second reader finished the first one's stream while the download
    /// still ran (a list row's bar stopped at 1.9 of 8 MB when the detail screen opened).
    @Test(
        "every reader of a download's progress reads until the download ends, the latest value first",
        .timeLimit(.minutes(1)))
    func everyProgressReaderReadsToTheEnd() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = ManualBackgroundTransport()
        let manager = try Self.manager(folder, transport)
        let id = try await manager.enqueue("/videos/7", to: folder.appendingPathComponent("video.mov"))
        let total = Int64(Self.body.count)
        var list = await manager.progress(for: id).makeAsyncIterator()
        transport.progressContinuation.yield(
            BackgroundTransferProgress(taskDescription: id.uuidString, completedBytes: 4_000, totalBytes: total))
        #expect(await list.next()?.completedBytes == 4_000)

        var detail = await manager.progress(for: id).makeAsyncIterator()
        #expect(await detail.next()?.completedBytes == 4_000)
        // Finished without a last progress report (the session's may come after the event).
        try transport.finish(id.uuidString, body: Self.body, headers: Self.digestHeaders(Self.body))
        _ = try await manager.result(for: id)
        #expect(await list.next() == TransferProgress(completedBytes: total, totalBytes: total))
        #expect(await detail.next() == TransferProgress(completedBytes: total, totalBytes: total))
        #expect(await list.next() == nil)
        #expect(await detail.next() == nil)
    }

    @Test(
        "a file failing verification is deleted and the destination left untouched",
        arguments: ["digest", "length", "status"])
    func verificationFailure(_ kind: String) async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("existing.bin")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data("old".utf8).write(to: destination)
        let transport = ManualBackgroundTransport()
        let manager = try Self.manager(folder, transport)
        let id = try await manager.enqueue("/file", to: destination)
        var body = Self.body
        var headers = Self.digestHeaders(body)
        var status = 200
        switch kind {
        case "digest": body[5] ^= 0xFF
        case "length": headers = Self.digestHeaders(body, length: body.count + 1)
        default: status = 404
        }
        try transport.finish(id.uuidString, body: body, status: status, headers: headers)
        let error = await #expect(throws: DownloadError.self) { _ = try await manager.result(for: id) }
        switch (kind, error?.reason) {
        case ("digest", .digestMismatch?), ("length", .lengthMismatch(Int64(body.count + 1), Int64(body.count))?),
            ("status", .network(.notFound)?):
            break
        default: Issue.record("\(kind): unexpected \(String(describing: error))")
        }
        #expect(try Data(contentsOf: destination) == Data("old".utf8))
        #expect(await manager.downloads.first?.state != .pending)
    }

    static let resume = Data("resume-blob".utf8)

    /// A download that failed with resume data (`resume`) after the system lost the connection.
    static func failedWithResumeData(
        _ folder: URL, _ transport: ManualBackgroundTransport
    ) async throws -> (BackgroundDownloads, UUID) {
        let manager = try Self.manager(folder, transport)
        let id = try await manager.enqueue("/big", to: folder.appendingPathComponent("big.bin"))
        transport.continuation.yield(
            BackgroundTransferEvent(
                taskDescription: id.uuidString, outcome: .failed(URLError(.networkConnectionLost)), resumeData: resume))
        await #expect(throws: DownloadError.self) { _ = try await manager.result(for: id) }
        return (manager, id)
    }

    @Test("a failure with resume data is resumable; resume hands the data to the system")
    func resumeData() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = ManualBackgroundTransport()
        let (manager, id) = try await Self.failedWithResumeData(folder, transport)
        #expect(await manager.downloads.first?.isResumable == true)
        try await manager.resume(id)
        #expect(transport.started.withLock { $0.last?.resumeData } == Self.resume)
        #expect(await manager.downloads.first?.state == .pending)
        try transport.finish(id.uuidString, body: Self.body, headers: Self.digestHeaders(Self.body))
        #expect(try Data(contentsOf: try await manager.result(for: id)) == Self.body)
    }

    @Test("a resumed task's 206 is checked against the Content-Range's complete length and a whole-file digest")
    func resumedTaskAnswers206() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = ManualBackgroundTransport()
        let (manager, id) = try await Self.failedWithResumeData(folder, transport)
        try await manager.resume(id)
        // The system hands over the whole file; the response is the 206 for the last 4000 bytes,
        // with a Content-Digest of those bytes only and a Repr-Digest of the whole.
        let part = Self.body.suffix(4000)
        var headers = Self.digestHeaders(Self.body)
        headers.replace("Content-Length", with: "4000")
        headers.replace("Content-Range", with: "bytes 6000-9999/10000")
        headers.replace("Content-Digest", with: "sha-256=:\(Data(SHA256.hash(part)).base64EncodedString()):")
        try transport.finish(id.uuidString, body: Self.body, status: 206, headers: headers)
        #expect(try Data(contentsOf: try await manager.result(for: id)) == Self.body)
    }

    @Test("a 206 without a usable Content-Range fails: the file's length cannot be checked")
    func partWithoutContentRangeFails() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = ManualBackgroundTransport()
        let (manager, id) = try await Self.failedWithResumeData(folder, transport)
        try await manager.resume(id)
        try transport.finish(id.uuidString, body: Self.body, status: 206, headers: ["Content-Length": "4000"])
        await #expect(throws: DownloadError.self) { _ = try await manager.result(for: id) }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("big.bin").path))
    }

    @Test("a resume the session refuses keeps the resume data and the failure; resuming again later works")
    func refusedResumeKeepsItsData() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = ManualBackgroundTransport()
        let (manager, id) = try await Self.failedWithResumeData(folder, transport)

        transport.refusal.set(URLError(.cannotCreateFile))
        await #expect(throws: URLError.self) { try await manager.resume(id) }
        #expect(await manager.downloads.first?.isResumable == true)
        // Still failed, not pending with nothing behind it: the result is the failure, at once.
        await #expect(throws: DownloadError.self) { _ = try await manager.result(for: id) }
        let relaunched = try Self.manager(folder, ManualBackgroundTransport())
        #expect(await relaunched.downloads.first?.isResumable == true, "the registry on disk keeps the resume data too")

        transport.refusal.set(nil)
        try await manager.resume(id)
        #expect(transport.started.withLock { $0.last?.resumeData } == Self.resume, "the same bytes, kept across the refusal")
        try transport.finish(id.uuidString, body: Self.body, headers: Self.digestHeaders(Self.body))
        #expect(try Data(contentsOf: try await manager.result(for: id)) == Self.body)
    }

    @Test("a token manager the client's environment does not authenticate with signs no download")
    func anotherEnvironmentsTokenManagerSignsNothing() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let start = Date()
        let server = FakeTokenServer(now: start)
        func tokens() -> TokenManager {
            FakeTokenServer.tokenManager(
                server.makeTransport(), store: InMemoryTokenStore(server.signIn(accessExpiresAt: start.addingTimeInterval(600)))
            ) { start }
        }
        let (staging, production) = (tokens(), tokens())
        let client = TransfersFixture.client(StubTransport(responses: [HTTPResponse]())) {
            $0.interceptors = [RequestIDInterceptor(), AuthInterceptor(tokenManager: production)]
        }
        let transport = ManualBackgroundTransport()
        let manager = try BackgroundDownloads(
            client: client, directory: folder.appendingPathComponent("m"), transport: transport, tokenManager: staging)
        await #expect(throws: NetworkError.self) {
            _ = try await manager.enqueue("/big", to: folder.appendingPathComponent("big.bin"))
        }
        #expect(transport.started.withLock { $0.isEmpty })
    }

    @Test("a download cancelled while its resume waits for a fresh token is not left running")
    func cancelDuringResumeStopsTheNewTask() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let start = Date()
        let now = Locked(start)
        let server = FakeTokenServer(now: start)
        let store = InMemoryTokenStore(server.signIn(accessExpiresAt: start.addingTimeInterval(600)))
        // The refresh answers only when the test says so.
        let refreshing = Locked(false)
        let (release, releaseAll) = AsyncStream.makeStream(of: Void.self)
        let refreshes = StubTransport { request in
            refreshing.set(true)
            for await _ in release { break }
            return server.handle(request)
        }
        let tokens = FakeTokenServer.tokenManager(refreshes, store: store) { now.current }
        let transport = ManualBackgroundTransport()
        let manager = try BackgroundDownloads(
            client: TransfersFixture.client(StubTransport(responses: [HTTPResponse]())),
            directory: folder.appendingPathComponent("m"), transport: transport, tokenManager: tokens)
        let id = try await manager.enqueue("/big", to: folder.appendingPathComponent("big.bin"))
        transport.continuation.yield(
            BackgroundTransferEvent(
                taskDescription: id.uuidString, outcome: .failed(URLError(.networkConnectionLost)),
                resumeData: Self.resume))
        await #expect(throws: DownloadError.self) { _ = try await manager.result(for: id) }

        now.set(start.addingTimeInterval(3600))  // the access token has expired: resume refreshes first
        let resuming = Task { try await manager.resume(id) }
        try await Self.eventually { refreshing.current }
        try await manager.cancel(id)
        releaseAll.finish()
        await #expect(throws: DownloadError.self) { try await resuming.value }
        #expect(await manager.downloads.isEmpty)
        #expect(transport.started.withLock { $0.last?.resumeData } == Self.resume, "the session took it...")
        #expect(transport.cancelled.current.last == id.uuidString, "...and was told to stop it")
    }

    /// Waits (bounded: 10 s, polling every 5 ms) until `condition` holds.
    static func eventually(_ condition: @Sendable () -> Bool) async throws {
        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(10)
        while !condition() {
            guard clock.now < deadline else { throw CancellationError() }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test("a download the session refuses at enqueue is failed, never pending with nothing behind it")
    func refusedEnqueueFails() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = ManualBackgroundTransport()
        transport.refusal.set(URLError(.cannotCreateFile))
        let manager = try Self.manager(folder, transport)
        await #expect(throws: URLError.self) {
            _ = try await manager.enqueue("/big", to: folder.appendingPathComponent("big.bin"))
        }
        let record = try #require(await manager.downloads.first)
        guard case .failed = record.state else {
            Issue.record("expected failed, got \(record.state)")
            return
        }
        await #expect(throws: URLError.self) { _ = try await manager.result(for: record.id) }
    }

    @Test("progress of a running download comes from the transport and ends with it")
    func progress() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let transport = ManualBackgroundTransport()
        let manager = try Self.manager(folder, transport)
        let id = try await manager.enqueue("/big", to: folder.appendingPathComponent("p.bin"))
        let steps = await manager.progress(for: id)
        transport.progressContinuation.yield(
            BackgroundTransferProgress(taskDescription: id.uuidString, completedBytes: 4096, totalBytes: 10_000))
        var iterator = steps.makeAsyncIterator()
        let first = await iterator.next()
        #expect(first?.completedBytes == 4096 && first?.totalBytes == 10_000)
        try transport.finish(id.uuidString, body: Self.body, headers: Self.digestHeaders(Self.body))
        _ = try await manager.result(for: id)
        while await iterator.next() != nil {}  // ends: the download ended
    }

    @Test("an unreadable registry is a typed error, never replaced")
    func corruptRegistry() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let registry = folder.appendingPathComponent("m/downloads.json")
        try FileManager.default.createDirectory(at: registry.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("[{".utf8).write(to: registry)
        #expect(throws: BackgroundDownloadError.self) { _ = try Self.manager(folder, ManualBackgroundTransport()) }
        #expect(try Data(contentsOf: registry) == Data("[{".utf8))
    }

    @Test("cancel throws when the registry cannot be written (a directory stands where it goes; root too)")
    func cancelReportsAnUnwritableRegistry() async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let manager = try Self.manager(folder, ManualBackgroundTransport())
        let id = try await manager.enqueue("/big", to: folder.appendingPathComponent("big.bin"))
        let registry = folder.appendingPathComponent("m/downloads.json")
        try FileManager.default.removeItem(at: registry)
        try FileManager.default.createDirectory(at: registry, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: registry.appendingPathComponent("keep"))

        await #expect(throws: BackgroundDownloadError.self) { try await manager.cancel(id) }
        #expect(await manager.downloads.isEmpty)
    }
}
