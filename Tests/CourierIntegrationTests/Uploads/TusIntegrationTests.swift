import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

@Suite("tus 1.0 resumable uploads against the reference server")
struct TusIntegrationTests {
    struct Info: Decodable {
        var offset: Int
        var length: Int
        var sha256: String
        var complete: Bool
        var metadata: String?
    }

    static func info(_ url: URL, namespace: String) async throws -> Info {
        let (_, data) = try await TestServers.control("GET", "_tus/\(url.lastPathComponent)", namespace: namespace)
        return try JSONDecoder().decode(Info.self, from: data)
    }

    static func uploader(
        _ client: APIClient, store: ResumableUploadStore, chunk: Int = 64 << 10, policy: EndpointPolicy = UploadFixtures.policy
    ) -> TusUploader {
        TusUploader(client: client, creationPath: "/tus/files", store: store, chunkSize: chunk, policy: policy)
    }

    /// An uploader whose run ends at the first failed PATCH (no recovery): an interrupted upload.
    static func interrupted(_ client: APIClient, store: ResumableUploadStore) -> TusUploader {
        uploader(client, store: store, policy: UploadFixtures.policy.with(\.retry, .none))
    }

    /// Uploads 200,000 bytes whose second PATCH the server refuses as `control` says (a 503 by
    /// default), the HEADs meeting `headFaults` first, with two quick retries; expects the upload
    /// complete with the file's SHA-256 and its record removed, and returns the tus requests the
    /// server saw.
    static func uploadWithSecondPatchFailed(
        seed: Int, control: [String: Any] = ["failPatches": [2]], headFaults: [[String: Any]] = []
    ) async throws -> [LoggedRequest] {
        let (client, namespace) = try UploadFixtures.client()
        let data = UploadFixtures.bytes(200_000, seed: seed)
        let file = try UploadFixtures.file(data)
        let store = ResumableUploadStore(directory: try UploadFixtures.folder())
        try await TestServers.control("POST", "_tus/control", namespace: namespace, json: control)
        if !headFaults.isEmpty {
            try await TestServers.control(
                "POST", "_faults", namespace: namespace, json: ["path": "/tus/files/*", "method": "HEAD", "faults": headFaults])
        }
        let location = try await Self.uploader(client, store: store, policy: Self.twoQuickRetries).upload(fileAt: file).value
        let info = try await Self.info(location, namespace: namespace)
        #expect(info.complete && info.sha256 == UploadFixtures.sha256(data))
        #expect(try store.allRecords().isEmpty)
        return try await TestServers.requestLog(namespace: namespace).filter { $0.path.contains("/tus/files") }
    }

    @Test("a PATCH the server fails once (503) is recovered in the same run: HEAD, then on from the server's offset")
    func aFailedPatchIsRecoveredInTheSameRun() async throws {
        let log = try await Self.uploadWithSecondPatchFailed(seed: 31)
        #expect(log.map(\.method) == ["POST", "PATCH", "PATCH", "HEAD", "PATCH", "PATCH", "PATCH"])
    }

    /// The HEAD that follows the failed PATCH meets one 503 too: it counted as the end of the run,
    /// with the policy's second retry unused.
    @Test func aRecoveryHeadTheServerFailsOnceIsAskedAgainWithinTheRetries() async throws {
        let log = try await Self.uploadWithSecondPatchFailed(seed: 5, headFaults: [["status": 503, "retryAfter": "0"]])
        #expect(log.map(\.method) == ["POST", "PATCH", "PATCH", "HEAD", "HEAD", "PATCH", "PATCH", "PATCH"])
    }

    /// The HEAD after a failed PATCH says the upload is gone (the server expired it meanwhile):
    /// the run ended with the PATCH's 503 where tus clients start a new upload.
    @Test func anUploadGoneWhenItsRecoveryHeadAsksIsCreatedAnewInTheSameRun() async throws {
        let log = try await Self.uploadWithSecondPatchFailed(seed: 8, headFaults: [["status": 404]])
        #expect(log.map(\.method) == ["POST", "PATCH", "PATCH", "HEAD", "POST", "PATCH", "PATCH", "PATCH", "PATCH"])
        #expect(
            log.filter { $0.method == "PATCH" }.suffix(4).map { $0.header("Upload-Offset") } == [
                "0", "65536", "131072", "196608",
            ])
    }

    /// A PATCH answered 409, and the HEAD that asks for the server's offset says the upload is
    /// gone (expired meanwhile): the run ended with the 409 where a HEAD after a failed PATCH
    /// starts a new upload.
    @Test func anUploadGoneWhenTheHeadAfterAConflictAsksIsCreatedAnewInTheSameRun() async throws {
        let log = try await Self.uploadWithSecondPatchFailed(
            seed: 10, control: ["conflictPatches": [2], "conflictOffset": 0], headFaults: [["status": 404]])
        #expect(log.map(\.method) == ["POST", "PATCH", "PATCH", "HEAD", "POST", "PATCH", "PATCH", "PATCH", "PATCH"])
        #expect(
            log.filter { $0.method == "PATCH" }.suffix(4).map { $0.header("Upload-Offset") } == [
                "0", "65536", "131072", "196608",
            ])
    }

    /// Every upload the run creates is gone by the time its recovery HEAD asks: after two new
    /// uploads the run ends with the failure, not a loop.
    @Test func uploadsGoneAgainAndAgainEndTheRunAfterTwoNewOnes() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let file = try UploadFixtures.file(UploadFixtures.bytes(100_000, seed: 9))
        let store = ResumableUploadStore(directory: try UploadFixtures.folder())
        try await TestServers.control(
            "POST", "_faults", namespace: namespace,
            json: ["path": "/tus/files/*", "method": "PATCH", "faults": Array(repeating: ["status": 503], count: 5)])
        try await TestServers.control(
            "POST", "_faults", namespace: namespace,
            json: ["path": "/tus/files/*", "method": "HEAD", "faults": Array(repeating: ["status": 410], count: 5)])
        let policy = UploadFixtures.policy.with(
            \.retry, RetryPolicy(maxRetries: 5, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20)))
        await #expect(throws: NetworkError.self) {
            _ = try await Self.uploader(client, store: store, policy: policy).upload(fileAt: file).value
        }
        let log = try await TestServers.requestLog(namespace: namespace).filter { $0.path.contains("/tus/files") }
        #expect(log.map(\.method) == ["POST", "PATCH", "HEAD", "POST", "PATCH", "HEAD", "POST", "PATCH", "HEAD"])
    }

    static let twoQuickRetries = UploadFixtures.policy.with(
        \.retry, RetryPolicy(maxRetries: 2, baseDelay: .milliseconds(10), maxDelay: .milliseconds(20)))

    /// The connection of the 2nd PATCH (offset 65 536) breaks after 30 000 of its bytes, which the
    /// server keeps. Sent again at 65 536 (the pipeline's retry under the policy's idempotency key),
    /// it met 409 and the HEAD offset 95 536 failed the upload and dropped its record.
    @Test func aPatchCutAfterPartOfItsBodyGoesOnFromTheServersOffset() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let data = UploadFixtures.bytes(300_000, seed: 3)
        let file = try UploadFixtures.file(data)
        let store = ResumableUploadStore(directory: try UploadFixtures.folder())
        try await TestServers.control(
            "POST", "_tus/control", namespace: namespace, json: ["holdPatches": [2], "holdAfter": 30_000])
        let upload = Self.uploader(client, store: store, policy: Self.twoQuickRetries).upload(fileAt: file)
        _ = try await TestServers.control("POST", "_tus/held", namespace: namespace)
        try await TestServers.control("POST", "_tus/release", namespace: namespace)
        let location = try await upload.value
        let info = try await Self.info(location, namespace: namespace)
        #expect(info.complete && info.sha256 == UploadFixtures.sha256(data))
        let log = try await TestServers.requestLog(namespace: namespace).filter { $0.path.contains("/tus/files") }
        #expect(log.map(\.method) == ["POST", "PATCH", "PATCH", "HEAD", "PATCH", "PATCH", "PATCH", "PATCH"])
        #expect(
            log.filter { $0.method == "PATCH" }.map { $0.header("Upload-Offset") } == [
                "0", "65536", "95536", "161072", "226608", "292144",
            ])
        #expect((try await TestServers.stats(namespace: namespace)["tus"] as? [String: Any])?["conflicts"] as? Int == 0)
        #expect(try store.allRecords().isEmpty)
    }

    @Test("an upload is created, sent in chunks and complete; the record is removed; progress ends at the total")
    func uploadsInChunks() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let data = UploadFixtures.bytes(300_000)
        let file = try UploadFixtures.file(data)
        let store = ResumableUploadStore(directory: try UploadFixtures.folder())
        let upload = Self.uploader(client, store: store).upload(fileAt: file, metadata: ["filename": "clip.mov"])
        let progress = collect(upload.progress)
        let location = try await upload.value
        let values = await progress.value
        let info = try await Self.info(location, namespace: namespace)
        #expect(info.complete && info.sha256 == UploadFixtures.sha256(data))
        #expect(info.metadata == "filename \(Data("clip.mov".utf8).base64EncodedString())")
        #expect(try store.allRecords().isEmpty)
        #expect(zip(values, values.dropFirst()).allSatisfy { $0.completedBytes <= $1.completedBytes })
        #expect(values.last?.completedBytes == Int64(data.count))
        let patches = try await TestServers.requestLog(namespace: namespace).filter { $0.method == "PATCH" }
        #expect(patches.count == 5)  // 300 000 bytes in 64 KiB chunks
        #expect(patches.allSatisfy { $0.header("Tus-Resumable") == "1.0.0" })
    }

    @Test("a 409 offset conflict is recovered: HEAD, then continue from the server's offset")
    func offsetConflictRecovered() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let data = UploadFixtures.bytes(200_000, seed: 9)
        let file = try UploadFixtures.file(data)
        let store = ResumableUploadStore(directory: try UploadFixtures.folder())
        // At the 2nd PATCH the server has lost everything after byte 1000: that PATCH (offset
        // 65536) gets 409, the client asks HEAD and sends from 1000.
        try await TestServers.control(
            "POST", "_tus/control", namespace: namespace, json: ["conflictPatches": [2], "conflictOffset": 1000])
        let location = try await Self.uploader(client, store: store).upload(fileAt: file).value
        let info = try await Self.info(location, namespace: namespace)
        #expect(info.complete && info.sha256 == UploadFixtures.sha256(data))
        let log = try await TestServers.requestLog(namespace: namespace).filter { $0.path.contains("/tus/files") }
        #expect(log.map(\.method) == ["POST", "PATCH", "PATCH", "HEAD", "PATCH", "PATCH", "PATCH", "PATCH"])
        #expect(
            log.filter { $0.method == "PATCH" }.map { $0.header("Upload-Offset") } == [
                "0", "65536", "1000", "66536", "132072", "197608",
            ])
        #expect((try await TestServers.stats(namespace: namespace)["tus"] as? [String: Any])?["conflicts"] as? Int == 1)
    }

    @Test("an expired upload (404 or 410) starts a new one", arguments: [404, 410])
    func expiredUploadStartsOver(status: Int) async throws {
        let (client, namespace) = try UploadFixtures.client()
        let data = UploadFixtures.bytes(150_000, seed: 12)
        let file = try UploadFixtures.file(data)
        let store = ResumableUploadStore(directory: try UploadFixtures.folder())
        try await TestServers.control("POST", "_tus/control", namespace: namespace, json: ["failPatches": [2]])
        await #expect(throws: NetworkError.self) {
            _ = try await Self.interrupted(client, store: store).upload(fileAt: file).value
        }
        let creationURL = try #require(Self.uploader(client, store: store).creationURL)
        let old = try #require(try store.record(for: TusUploader.key(for: file, creationURL: creationURL)))
        try await TestServers.control(
            "POST", "_tus/\(old.uploadURL.lastPathComponent)/expire", namespace: namespace, json: ["status": status])
        let location = try await Self.uploader(client, store: store).upload(fileAt: file).value
        #expect(location != old.uploadURL)
        let info = try await Self.info(location, namespace: namespace)
        #expect(info.complete && info.sha256 == UploadFixtures.sha256(data))
        #expect((try await TestServers.stats(namespace: namespace)["tus"] as? [String: Any])?["created"] as? Int == 2)
    }

    @Test("after a restart a new uploader with the persisted record resumes: no new creation, PATCH from the saved offset")
    func resumesAfterRestart() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let data = UploadFixtures.bytes(260_000, seed: 21)
        let file = try UploadFixtures.file(data)
        let folder = try UploadFixtures.folder()
        try await TestServers.control("POST", "_tus/control", namespace: namespace, json: ["failPatches": [3]])
        await #expect(throws: NetworkError.self) {
            _ = try await Self.interrupted(client, store: ResumableUploadStore(directory: folder)).upload(fileAt: file).value
        }
        // "Restart": a new client, a new store instance over the same folder. Its PATCHes wait
        // until the reader below has the first progress value: a reader that is behind gets only
        // the newest value (`Upload.progress`), so under load the PATCH's progress replaced the
        // resumed offset before the reader's task first ran, and `first` was a later value.
        let reading = ReaderStarted()
        let (freshClient, _) = try TestServers.apiClient(namespace: namespace) {
            $0.interceptors = .standard(retry: RetryInterceptor(clock: TestClock())) + [reading.holdingPatches]
        }
        let store = ResumableUploadStore(directory: folder)
        let creationURL = try #require(Self.uploader(freshClient, store: store).creationURL)
        let saved = try #require(try store.record(for: TusUploader.key(for: file, creationURL: creationURL)))
        #expect(saved.creationURL == creationURL)
        #expect(saved.offset == 2 * (64 << 10))
        let upload = Self.uploader(freshClient, store: store).upload(fileAt: file)
        let progress = reading.collect(upload.progress)
        let location = try await upload.value
        #expect(location == saved.uploadURL)
        #expect(await progress.value.first?.completedBytes == saved.offset)
        let info = try await Self.info(location, namespace: namespace)
        #expect(info.complete && info.sha256 == UploadFixtures.sha256(data))
        let log = try await TestServers.requestLog(namespace: namespace)
        #expect(log.filter { $0.method == "POST" && $0.path.hasSuffix("/tus/files") }.count == 1)
        let lastHead = try #require(log.lastIndex { $0.method == "HEAD" })
        #expect(log[(lastHead + 1)...].first { $0.method == "PATCH" }?.header("Upload-Offset") == String(saved.offset))
        #expect(try store.allRecords().isEmpty)
    }
}

/// Whether a test's progress reader has its first value; ``holdingPatches`` holds each PATCH until
/// it has (bounded: 10 s), so that no progress of a PATCH can replace that value first.
final class ReaderStarted: Sendable {
    private let started = Locked(false)

    /// Collects `progress` in a task, as `collect(_:)`, noting its first value.
    func collect(_ progress: AsyncStream<TransferProgress>) -> Task<[TransferProgress], Never> {
        Task {
            var values: [TransferProgress] = []
            for await value in progress {
                values.append(value)
                started.set(true)
            }
            return values
        }
    }

    /// An interceptor that holds each PATCH until the reader has its first value, or 10 s passed.
    var holdingPatches: any Interceptor { HoldPatches(started: started) }

    private struct HoldPatches: Interceptor {
        let started: Locked<Bool>

        func intercept(_ request: URLRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
            if request.httpMethod == "PATCH" {
                let clock = ContinuousClock()
                let deadline = clock.now + .seconds(10)
                while !started.current, clock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            }
            return try await next(request)
        }
    }
}
