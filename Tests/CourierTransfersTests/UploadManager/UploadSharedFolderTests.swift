import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// Two managers on one folder — an app and its share extension, each with its own `UploadManager`
/// on the app group's folder — send each upload once: the one that is sending it holds its claim,
/// so the other's `resumePending()` neither sends it again, nor fails it, nor removes its staged
/// copy as a leftover.
@Suite("UploadManager: managers sharing a folder")
struct UploadSharedFolderTests {
    /// Holds every request until ``open()``; counts them.
    final class HeldTransport: Sendable {
        private let state = Locked<(isOpen: Bool, waiting: [CheckedContinuation<Void, Never>])>((false, []))
        let transport: StubTransport

        init() {
            let box = Locked<HeldTransport?>(nil)
            transport = StubTransport { request in
                await box.current?.wait()
                return HTTPResponse(statusCode: 201, body: Data("{}".utf8), url: request.url)
            }
            box.set(self)
        }

        private func wait() async {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state in
                    if state.isOpen { return true }
                    state.waiting.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }

        func open() {
            let waiting = state.withLock { state in
                state.isOpen = true
                defer { state.waiting.removeAll() }
                return state.waiting
            }
            for continuation in waiting { continuation.resume() }
        }

        /// Waits (at most 10 s) until `count` requests arrived.
        func waitForRequests(_ count: Int) async throws {
            let clock = ContinuousClock()
            let limit = clock.now.advanced(by: .seconds(10))
            while transport.requestCount < count, clock.now < limit { try await Task.sleep(for: .milliseconds(5)) }
        }
    }

    static func folder() throws -> (root: URL, source: URL) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("upload-shared-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let source = root.appendingPathComponent("photo.jpg")
        try Data(repeating: 9, count: 4096).write(to: source)
        return (root, source)
    }

    static func staged(_ folder: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("staged").path)
    }

    @Test(
        "a manager does not send again, fail or unstage an upload another manager on the folder is sending",
        arguments: [IdempotencyPolicy.automatic, .none])
    func anUploadBeingSentByAnotherManagerIsLeftToIt(idempotency: IdempotencyPolicy) async throws {
        let (root, source) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("uploads")
        let held = HeldTransport()
        let policy = EndpointPolicy.standard.with(\.idempotency, idempotency)
        let client = TransfersFixture.client(held.transport) { $0.interceptors.append(IdempotencyInterceptor()) }
        let app = try UploadManager(client: client, directory: folder, policy: policy)
        let id = try await app.enqueue(fileAt: source, to: "/photos", contentType: "image/jpeg")
        try await held.waitForRequests(1)

        // The extension starts while the app's upload is on the wire.
        let sharing = try UploadManager(client: client, directory: folder, policy: policy)
        await sharing.resumePending()

        #expect(held.transport.requestCount == 1, "sent once")
        #expect(await sharing.uploads.map(\.state) == [.pending], "not failed while the app sends it")
        #expect(try Self.staged(folder).count == 1, "its staged copy is kept")
        let asked = Task { try await sharing.result(for: id) }
        let outcome = await TransfersFixture.firstOutcome(of: asked, orAfter: .seconds(10))
        #expect(outcome.contains("another manager"), "asked there: it says so at once, \(outcome)")

        held.open()
        #expect(try await app.result(for: id).statusCode == 201)
        #expect(held.transport.requestCount == 1)
        // Once the app recorded the outcome, the extension finds it settled and sends nothing.
        await sharing.resumePending()
        #expect(await sharing.uploads.map(\.state) == [.completed(statusCode: 201)])
        #expect(held.transport.requestCount == 1)
        #expect(try Self.staged(folder).isEmpty)
    }

    @Test("a manager opened before another enqueued keeps that upload's staged copy")
    func aManagerOpenedEarlierKeepsAnotherManagersStagedCopy() async throws {
        let (root, source) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("uploads")
        let held = HeldTransport()
        let client = TransfersFixture.client(held.transport)
        // The extension's manager exists first; then the app enqueues.
        let sharing = try UploadManager(client: client, directory: folder, policy: .standard)
        let app = try UploadManager(client: client, directory: folder, policy: .standard)
        let id = try await app.enqueue(fileAt: source, to: "/photos", contentType: "image/jpeg")
        try await held.waitForRequests(1)

        await sharing.resumePending()

        #expect(try Self.staged(folder).count == 1, "the app's staged copy is not a leftover")
        #expect(held.transport.requestCount == 1)
        held.open()
        #expect(try await app.result(for: id).statusCode == 201)
        #expect(held.transport.requestCount == 1)
    }

    @Test("an upload whose manager ended is sent by the next manager that resumes")
    func anUploadWhoseManagerEndedIsResumedElsewhere() async throws {
        let (root, source) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("uploads")
        let offline = StubTransport { _ in throw URLError(.notConnectedToInternet) }
        do {
            let ended = try UploadManager(client: TransfersFixture.client(offline), directory: folder, policy: .standard)
            let id = try await ended.enqueue(fileAt: source, to: "/photos", contentType: "image/jpeg")
            await #expect(throws: NetworkError.self) { _ = try await ended.result(for: id) }
        }
        let online = StubTransport(responses: [HTTPResponse(statusCode: 201, body: Data("{}".utf8))])
        let next = try UploadManager(client: TransfersFixture.client(online), directory: folder, policy: .standard)
        await next.resumePending()
        let id = try #require(await next.uploads.first?.id)
        #expect(try await next.result(for: id).statusCode == 201)
        #expect(online.requestCount == 1)
    }

    @Test("an upload kept pending after a network failure is sent by whichever manager resumes first")
    func aWaitingUploadIsAnyManagersToSend() async throws {
        let (root, source) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("uploads")
        let offline = StubTransport { _ in throw URLError(.notConnectedToInternet) }
        let extensionManager = try UploadManager(
            client: TransfersFixture.client(offline), directory: folder, policy: .standard)
        let id = try await extensionManager.enqueue(fileAt: source, to: "/photos", contentType: "image/jpeg")
        await #expect(throws: NetworkError.self) { _ = try await extensionManager.result(for: id) }

        // The extension lives on (suspended, say); the app resumes when the network is back.
        let online = StubTransport(responses: [HTTPResponse(statusCode: 201, body: Data("{}".utf8))])
        let app = try UploadManager(client: TransfersFixture.client(online), directory: folder, policy: .standard)
        await app.resumePending()
        #expect(try await app.result(for: id).statusCode == 201)

        // The extension finds it done and sends nothing.
        await extensionManager.resumePending()
        #expect(try await extensionManager.result(for: id).statusCode == 201)
        #expect(offline.requestCount == 1)
        #expect(online.requestCount == 1)
    }

    /// The process identifier of a program that has ended.
    static func endedProcess() throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exit 0"]
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    @Test("an upload another live process sends is left to it; one whose process ended is sent")
    func theSendersProcessDecides() async throws {
        let (root, source) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("uploads")
        let staged = folder.appendingPathComponent("staged")
        try FileManager.default.createDirectory(at: staged, withIntermediateDirectories: true)
        func record(_ name: String, sender: UploadSender) throws -> UploadRecord {
            try FileManager.default.copyItem(at: source, to: staged.appendingPathComponent(name))
            var record = UploadRecord(
                id: UUID(), method: "PUT", url: TransfersFixture.baseURL.appendingPathComponent("photos/\(name)"),
                headers: ["Content-Type": "image/jpeg"], stagedFileName: name, mode: .foreground, state: .pending,
                createdAt: Date())
            record.sender = sender
            return record
        }
        // The process that started this test is alive (another app of the app group, say).
        let live = try record("live.jpg", sender: UploadSender(process: getppid(), manager: UUID()))
        let ended = try record("ended.jpg", sender: UploadSender(process: try Self.endedProcess(), manager: UUID()))
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode([live, ended]).write(to: folder.appendingPathComponent("uploads.json"))
        let transport = StubTransport { request in HTTPResponse(statusCode: 201, body: Data("{}".utf8), url: request.url) }
        let manager = try UploadManager(client: TransfersFixture.client(transport), directory: folder, policy: .standard)

        await manager.resumePending()

        #expect(try await manager.result(for: ended.id).statusCode == 201)
        #expect(transport.requests.map { $0.url?.lastPathComponent } == ["ended.jpg"])
        await #expect(throws: NetworkError.self) { _ = try await manager.result(for: live.id) }
        #expect(try Self.staged(folder) == ["live.jpg"], "the live sender's copy stays")
    }
}
