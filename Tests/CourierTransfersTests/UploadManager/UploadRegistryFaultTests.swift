import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// The upload registry (`uploads.json`) when storage misbehaves: a registry that cannot be read
/// is never taken for an empty one (that would sweep every staged file and overwrite it), and a
/// write that fails is reported, never dropped.
///
/// The obstacle is a non-empty directory where the registry file goes: `rename(2)` cannot replace
/// it and reading it fails, also for root (CI runs as root, so file modes would not do).
@Suite("Upload registry: unreadable and unwritable storage")
struct UploadRegistryFaultTests {
    struct Folder {
        let root: URL
        var manager: URL { root.appendingPathComponent("manager", isDirectory: true) }
        var registry: URL { manager.appendingPathComponent("uploads.json") }
        var staged: URL { manager.appendingPathComponent("staged", isDirectory: true) }
        var source: URL { root.appendingPathComponent("photo.jpg") }

        init() throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("upload-registry-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try Data(repeating: 9, count: 4096).write(to: source)
        }

        /// Puts a non-empty directory where the registry file goes.
        func blockRegistry() throws {
            try? FileManager.default.removeItem(at: registry)
            try FileManager.default.createDirectory(at: registry, withIntermediateDirectories: true)
            try Data("x".utf8).write(to: registry.appendingPathComponent("keep"))
        }

        func unblockRegistry() throws { try FileManager.default.removeItem(at: registry) }

        func stagedFiles() throws -> [String] {
            guard FileManager.default.fileExists(atPath: staged.path) else { return [] }
            return try FileManager.default.contentsOfDirectory(atPath: staged.path).sorted()
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    static func ok() -> HTTPResponse { HTTPResponse(statusCode: 201, body: Data("{}".utf8)) }

    @Test("a registry that is not JSON stops the manager and leaves the registry and the staged files as they were")
    func corruptRegistryIsNotTakenForEmpty() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        try FileManager.default.createDirectory(at: folder.staged, withIntermediateDirectories: true)
        let stagedFile = folder.staged.appendingPathComponent("pending-upload")
        try Data(repeating: 1, count: 100).write(to: stagedFile)
        let garbage = Data("{\"truncated\": [".utf8)
        try garbage.write(to: folder.registry)

        let error = #expect(throws: UploadManagerError.self) {
            try UploadManager(
                client: TransfersFixture.client(StubTransport(responses: [HTTPResponse]())), directory: folder.manager)
        }
        guard case .registryUnreadable(let path, _) = error else {
            Issue.record("expected registryUnreadable, got \(String(describing: error))")
            return
        }
        #expect(path == folder.registry.path)
        #expect(try Data(contentsOf: folder.registry) == garbage)
        #expect(try folder.stagedFiles() == ["pending-upload"])
    }

    @Test("a registry path that cannot be read (a directory) stops the manager too")
    func unreadableRegistryStopsTheManager() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        try folder.blockRegistry()
        #expect(throws: UploadManagerError.self) {
            try UploadManager(
                client: TransfersFixture.client(StubTransport(responses: [HTTPResponse]())), directory: folder.manager)
        }
    }

    @Test("a missing registry is an empty one")
    func missingRegistryIsEmpty() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let manager = try UploadManager(
            client: TransfersFixture.client(StubTransport(responses: [HTTPResponse]())), directory: folder.manager)
        #expect(await manager.uploads.isEmpty)
        #expect(await manager.registryFailure == nil)
    }

    @Test("enqueue throws when the record cannot be written, and keeps neither the record nor the staged copy")
    func enqueueThrowsWhenTheRegistryIsUnwritable() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let transport = StubTransport(responses: [Self.ok()])
        let manager = try UploadManager(client: TransfersFixture.client(transport), directory: folder.manager)
        try folder.blockRegistry()

        await #expect(throws: UploadManagerError.self) {
            _ = try await manager.enqueue(fileAt: folder.source, to: "/photos", contentType: "image/jpeg")
        }
        #expect(await manager.uploads.isEmpty)
        #expect(try folder.stagedFiles().isEmpty)
        #expect(transport.requestCount == 0)
        #expect(await manager.registryFailure != nil)
    }

    @Test("an outcome that cannot be written is reported in registryFailure, and the next write that succeeds carries it")
    func settleFailureIsReportedAndRepaired() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        // The server answers only after the registry has become unwritable, so the upload's
        // outcome is the write that fails.
        let transport = StubTransport { _ in
            try folder.blockRegistry()
            return Self.ok()
        }
        let manager = try UploadManager(
            client: TransfersFixture.client(transport), directory: folder.manager, policy: .standard)
        let id = try await manager.enqueue(fileAt: folder.source, to: "/photos", contentType: "image/jpeg")
        let response = try await manager.result(for: id)
        #expect(response.statusCode == 201)
        #expect(transport.requestCount == 1)
        let failure = try #require(await manager.registryFailure)
        guard case .registryUnwritable(let path, _) = failure else {
            Issue.record("expected registryUnwritable, got \(failure)")
            return
        }
        #expect(path == folder.registry.path)

        // Still blocked: removing finished records says so.
        await #expect(throws: UploadManagerError.self) { try await manager.removeFinished() }

        // Storage is back: the next write succeeds, clears the failure, and a relaunch finds
        // nothing pending (the upload is not sent again).
        try folder.unblockRegistry()
        try await manager.removeFinished()
        #expect(await manager.registryFailure == nil)
        let relaunched = try UploadManager(
            client: TransfersFixture.client(StubTransport(responses: [HTTPResponse]())), directory: folder.manager)
        #expect(await relaunched.uploads.isEmpty)
    }

    @Test("an upload the server stored but the registry still lists as pending is sent again with the same Idempotency-Key")
    func resentUploadKeepsItsIdempotencyKey() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        // The first launch: the server stores the file, then the outcome cannot be written (the
        // same as the process ending before it was): the registry on disk still says pending.
        // Taken when the server has the file: the registry and the staged copy as a process that
        // ended right then would have left them.
        let leftBehind = Locked<(registry: Data, staged: [String: Data])?>(nil)
        let first = StubTransport { _ in
            var staged: [String: Data] = [:]
            for name in try folder.stagedFiles() {
                staged[name] = try Data(contentsOf: folder.staged.appendingPathComponent(name))
            }
            leftBehind.set((try Data(contentsOf: folder.registry), staged))
            try folder.blockRegistry()
            return Self.ok()
        }
        let client: (StubTransport) -> APIClient = { transport in
            TransfersFixture.client(transport) {
                $0.interceptors = [RequestIDInterceptor(), IdempotencyInterceptor(), RetryInterceptor(maximumRetries: 0)]
            }
        }
        var policy = EndpointPolicy.standard
        policy.idempotency = .automatic  // as in `.authorizedUpload`, the manager's default, without the auth
        let manager = try UploadManager(client: client(first), directory: folder.manager, policy: policy)
        let id = try await manager.enqueue(fileAt: folder.source, to: "/photos", contentType: "image/jpeg")
        _ = try await manager.result(for: id)
        try folder.unblockRegistry()
        let state = try #require(leftBehind.current)
        try state.registry.write(to: folder.registry)
        for (name, data) in state.staged { try data.write(to: folder.staged.appendingPathComponent(name)) }

        // The next launch finds it pending and sends it again, under the same key.
        await manager.endAsIfTheProcessEnded()
        let second = StubTransport(responses: [Self.ok()])
        let relaunched = try UploadManager(client: client(second), directory: folder.manager, policy: policy)
        await relaunched.resumePending()
        _ = try await relaunched.result(for: id)

        let keys = (first.requests + second.requests).map { $0.value(forHTTPHeaderField: "Idempotency-Key") }
        #expect(keys == [id.uuidString, id.uuidString])
    }

    /// An upload the server stored (201) whose outcome could not be written: from its answer on,
    /// the registry cannot be written, so the outcome is in memory only.
    struct UnwrittenOutcome {
        let manager: UploadManager
        let id: UUID
        let first: StubTransport
        /// The registry as it was on disk before the block (the upload pending).
        let registryOnDisk: Data
        let policy: EndpointPolicy

        /// A client over `transport` with the idempotency key the policy asks for.
        static func client(_ transport: StubTransport) -> APIClient {
            TransfersFixture.client(transport) {
                $0.interceptors = [RequestIDInterceptor(), IdempotencyInterceptor(), RetryInterceptor(maximumRetries: 0)]
            }
        }

        init(_ folder: Folder) async throws {
            let registryOnDisk = Locked<Data?>(nil)
            first = StubTransport { _ in
                registryOnDisk.set(try Data(contentsOf: folder.registry))
                try folder.blockRegistry()  // disk full / I/O error from here on
                return UploadRegistryFaultTests.ok()
            }
            var policy = EndpointPolicy.standard
            policy.idempotency = .automatic
            self.policy = policy
            manager = try UploadManager(client: Self.client(first), directory: folder.manager, policy: policy)
            id = try await manager.enqueue(fileAt: folder.source, to: "/photos", contentType: "image/jpeg")
            #expect(try await manager.result(for: id).statusCode == 201)
            #expect(await manager.registryFailure != nil)
            self.registryOnDisk = try #require(registryOnDisk.current)
        }

        /// The process ended with the registry on disk as it was; the next launch's manager.
        func relaunch(_ folder: Folder, over transport: StubTransport) async throws -> UploadManager {
            await manager.endAsIfTheProcessEnded()
            try folder.unblockRegistry()
            try registryOnDisk.write(to: folder.registry)
            return try UploadManager(client: Self.client(transport), directory: folder.manager, policy: policy)
        }
    }

    @Test(
        "resumePending keeps the staged copy of an upload whose outcome is not on disk yet: a relaunch sends it again",
        .timeLimit(.minutes(1)))
    func resumePendingKeepsTheStagedCopyOfAnOutcomeNotYetWritten() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let upload = try await UnwrittenOutcome(folder)
        let staged = try folder.stagedFiles()
        #expect(staged.count == 1)

        // The app sees the network come back and resumes, still unable to write the registry.
        await upload.manager.resumePending()
        #expect(try folder.stagedFiles() == staged, "the copy a relaunch needs was swept")

        // The process ends before a write succeeds; the next launch finds the upload pending and
        // sends it again from its copy, under the same key, instead of failing it.
        let second = StubTransport(responses: [Self.ok()])
        let relaunched = try await upload.relaunch(folder, over: second)
        await relaunched.resumePending()
        #expect(try await relaunched.result(for: upload.id).statusCode == 201)
        let keys = (upload.first.requests + second.requests).map { $0.value(forHTTPHeaderField: "Idempotency-Key") }
        #expect(keys == [upload.id.uuidString, upload.id.uuidString])
    }

    @Test("a background upload the session refuses is failed at enqueue: no pending record, no staged copy, no endless wait")
    func refusedBackgroundHandOverFails() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let manager = try UploadManager(
            client: TransfersFixture.client(StubTransport(responses: [HTTPResponse]())), directory: folder.manager,
            backgroundTransport: RefusingBackgroundTransport())
        await #expect(throws: URLError.self) {
            _ = try await manager.enqueue(
                fileAt: folder.source, to: "/photos", contentType: "image/jpeg", mode: .background)
        }
        let record = try #require(await manager.uploads.first)
        guard case .failed = record.state else {
            Issue.record("expected failed, got \(record.state)")
            return
        }
        await #expect(throws: NetworkError.self) { _ = try await manager.result(for: record.id) }
        #expect(try folder.stagedFiles().isEmpty)
        let relaunched = try UploadManager(
            client: TransfersFixture.client(StubTransport(responses: [HTTPResponse]())), directory: folder.manager)
        #expect(await relaunched.uploads.map(\.state) == [record.state], "the registry on disk says failed too")
    }

    @Test("cancel throws when the registry cannot be written; the upload is gone from this launch's list")
    func cancelThrowsWhenTheRegistryIsUnwritable() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let background = SilentBackgroundTransport()
        let manager = try UploadManager(
            client: TransfersFixture.client(StubTransport(responses: [HTTPResponse]())), directory: folder.manager,
            backgroundTransport: background)
        let id = try await manager.enqueue(
            fileAt: folder.source, to: "/photos", contentType: "image/jpeg", mode: .background)
        try folder.blockRegistry()

        await #expect(throws: UploadManagerError.self) { try await manager.cancel(id) }
        #expect(await manager.uploads.isEmpty)
        #expect(await manager.registryFailure != nil)
    }
}

/// A background session that takes every upload and never reports on it (the app was
/// suspended): the upload stays pending.
private final class SilentBackgroundTransport: BackgroundTransport, Sendable {
    let events: AsyncStream<BackgroundTransferEvent> = AsyncStream { _ in }
    func startUpload(_ request: URLRequest, fromFile fileURL: URL, taskDescription: String) throws {}
    func startDownload(_ request: URLRequest, taskDescription: String) throws {}
    func runningTaskDescriptions() async -> [String] { [] }
    func cancelTask(withDescription taskDescription: String) async {}
}

/// A background session that refuses every task (as when the system cannot create it).
private final class RefusingBackgroundTransport: BackgroundTransport, Sendable {
    let events: AsyncStream<BackgroundTransferEvent> = AsyncStream { _ in }
    func startUpload(_ request: URLRequest, fromFile fileURL: URL, taskDescription: String) throws {
        throw URLError(.cannotCreateFile)
    }
    func startDownload(_ request: URLRequest, taskDescription: String) throws { throw URLError(.cannotCreateFile) }
    func runningTaskDescriptions() async -> [String] { [] }
    func cancelTask(withDescription taskDescription: String) async {}
}

extension UploadRegistryFaultTests {
    @Test("an outcome that could not be written leaves an upload a relaunch sends again under its key")
    func anUnwrittenOutcomeKeepsTheStagedCopy() async throws {
        let folder = try UploadRegistryFaultTests.Folder()
        defer { folder.remove() }
        let upload = try await UploadRegistryFaultTests.UnwrittenOutcome(folder)
        // The process ends now. On disk: the registry as it was (pending); nothing else is touched.
        #expect(try folder.stagedFiles().count == 1, "the staged copy stays until the outcome is on disk")

        let second = StubTransport(responses: [UploadRegistryFaultTests.ok()])
        let relaunched = try await upload.relaunch(folder, over: second)
        #expect(await relaunched.uploads.map(\.state) == [.pending])
        await relaunched.resumePending()
        var outcome = "completed"
        do { _ = try await relaunched.result(for: upload.id) } catch { outcome = "failed: \(error)" }
        let states = await relaunched.uploads.map(\.state)
        #expect(outcome == "completed", "an upload the server stored (201) is now recorded as \(states)")
        #expect(second.requestCount == 1, "not re-sent with its Idempotency-Key")
    }
}
