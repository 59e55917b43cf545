import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

@Suite("Upload manager: staging, registry, modes, cleanup")
struct UploadManagerTests {
    static func staged(_ directory: URL) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: directory.appendingPathComponent("staged").path)) ?? []
    }

    static func counted(_ response: HTTPResponse) throws -> CountedUpload {
        try JSONDecoder().decode(CountedUpload.self, from: response.data)
    }

    @Test("foreground: the staged copy is sent (the original may change), the record completes, the copy is removed")
    func foregroundUpload() async throws {
        let (client, _) = try UploadFixtures.client()
        let directory = try UploadFixtures.folder()
        let data = UploadFixtures.bytes(100_000)
        let original = try UploadFixtures.file(data, name: "photo.jpg")
        let manager = try UploadManager(client: client, directory: directory, policy: UploadFixtures.policy)
        let id = try await manager.enqueue(fileAt: original, to: "/uploads/count", contentType: "image/jpeg")
        try Data("changed".utf8).write(to: original)  // the user edits the file meanwhile
        let result = try Self.counted(try await manager.result(for: id))
        #expect(result.sha256 == UploadFixtures.sha256(data))
        #expect(await manager.uploads.map(\.state) == [.completed(statusCode: 200)])
        #expect(Self.staged(directory).isEmpty)
    }

    @Test(
        "background mode through the transport protocol (Linux: the same transport over an ordinary session); a multipart body is staged as a file and removed after"
    )
    func backgroundMultipart() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let directory = try UploadFixtures.folder()
        let transport = URLSessionBackgroundTransport(configuration: .ephemeral)
        let manager = try UploadManager(
            client: client, directory: directory, backgroundTransport: transport,
            prepareBackgroundRequest: { $0.setValue("Bearer background", forHTTPHeaderField: "Authorization") })
        var form = MultipartForm()
        try form.addField(named: "caption", value: "sunset")
        let photo = UploadFixtures.bytes(60_000)
        try form.addFile(named: "photo", data: photo, filename: "sunset.jpg", contentType: "image/jpeg")
        let id = try await manager.enqueue(form, to: "/uploads/multipart", mode: .background)
        let response = try await manager.result(for: id)
        let parsed = try JSONDecoder().decode(ParsedForm.self, from: response.data)
        #expect(parsed.parts.map(\.name) == ["caption", "photo"])
        #expect(parsed.parts[1].sha256 == UploadFixtures.sha256(photo))
        #expect(Self.staged(directory).isEmpty)
        let log = try await TestServers.requestLog(namespace: namespace, path: "/uploads/multipart")
        #expect(log.first?.header("Authorization") == "Bearer background")
    }

    @Test("a cancelled upload leaves no staged or temporary file and no record")
    func cancelledUploadLeavesNothing() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let directory = try UploadFixtures.folder()
        let manager = try UploadManager(client: client, directory: directory, policy: UploadFixtures.policy)
        var form = MultipartForm()
        try form.addFile(named: "f", data: UploadFixtures.bytes(2 << 20), filename: "big.bin")
        let id = try await manager.enqueue(form, to: "/uploads/count?delay=0.5")
        #expect(Self.staged(directory).count == 1)
        try await manager.cancel(id)
        await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }
        #expect(Self.staged(directory).isEmpty)
        #expect(await manager.uploads.isEmpty)
        let uploads = try await TestServers.stats(namespace: namespace)["uploads"] as? [String: Any]
        #expect(uploads?["completed"] as? Int == 0)  // never finished on the server
    }

    @Test("after a crash: a new manager sends the pending foreground upload again and removes stray staged files")
    func resumesAfterCrash() async throws {
        let (client, _) = try UploadFixtures.client()
        let directory = try UploadFixtures.folder()
        let staged = directory.appendingPathComponent("staged")
        try FileManager.default.createDirectory(at: staged, withIntermediateDirectories: true)
        let data = UploadFixtures.bytes(50_000)
        try data.write(to: staged.appendingPathComponent("pending.bin"))
        try Data("left by a crash".utf8).write(to: staged.appendingPathComponent("stray.multipart"))
        // Staged at an earlier launch (a file staged within the hour may be another manager's).
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-2 * UploadManager.stagingGrace)],
            ofItemAtPath: staged.appendingPathComponent("stray.multipart").path)
        let record = UploadRecord(
            id: UUID(), method: "POST",
            url: try TestServers.apiEnvironment(namespace: TestServers.makeNamespace()).baseURL
                .appendingPathComponent("uploads/count"),
            headers: ["Content-Type": "application/octet-stream"], stagedFileName: "pending.bin", mode: .foreground,
            state: .pending, createdAt: Date())
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode([record]).write(to: directory.appendingPathComponent("uploads.json"))

        let manager = try UploadManager(client: client, directory: directory, policy: UploadFixtures.policy)
        await manager.resumePending()
        let result = try Self.counted(try await manager.result(for: record.id))
        #expect(result.sha256 == UploadFixtures.sha256(data))
        #expect(Self.staged(directory).isEmpty)
    }

    @Test("after a relaunch a background task of the previous launch is matched to its record by taskDescription")
    func backgroundEventOfEarlierLaunch() async throws {
        let (client, _) = try UploadFixtures.client()
        let directory = try UploadFixtures.folder()
        let staged = directory.appendingPathComponent("staged")
        try FileManager.default.createDirectory(at: staged, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: staged.appendingPathComponent("bg.bin"))
        let id = UUID()
        let record = UploadRecord(
            id: id, method: "PUT", url: URL(string: "https://uploads.example/files/1")!,
            headers: ["Content-Type": "application/octet-stream"], stagedFileName: "bg.bin", mode: .background,
            state: .pending, createdAt: Date())
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        try encoder.encode([record]).write(to: directory.appendingPathComponent("uploads.json"))

        let transport = RelaunchedTransport(running: [])
        let manager = try UploadManager(client: client, directory: directory, backgroundTransport: transport)
        await manager.resumePending()
        #expect(await manager.orphanedBackgroundUploads().map(\.id) == [id])
        #expect(Self.staged(directory) == ["bg.bin"])  // still pending: nothing re-sent, nothing removed
        transport.deliver(
            BackgroundTransferEvent(
                taskDescription: id.uuidString, outcome: .uploaded(statusCode: 201, headers: HTTPHeaders(), body: Data("ok".utf8))
            ))
        let response = try await manager.result(for: id)
        #expect(response.statusCode == 201 && response.data == Data("ok".utf8))
        #expect(Self.staged(directory).isEmpty)
        #expect(transport.started.current.isEmpty)
    }

    @Test("two managers on one folder keep each other's uploads in the registry")
    func twoManagersOnOneFolderKeepEachOthersUploads() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let directory = try UploadFixtures.folder()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Two managers on one folder (two clients of one app), both open before either enqueues.
        let first = try UploadManager(client: client, directory: directory, policy: UploadFixtures.policy)
        let second = try UploadManager(client: client, directory: directory, policy: UploadFixtures.policy)
        let one = try await first.enqueue(
            fileAt: try UploadFixtures.file(UploadFixtures.bytes(1000), name: "one.bin"), to: "/uploads/count",
            contentType: "application/octet-stream")
        let two = try await second.enqueue(
            fileAt: try UploadFixtures.file(UploadFixtures.bytes(2000), name: "two.bin"), to: "/uploads/count",
            contentType: "application/octet-stream")
        #expect(try Self.counted(try await first.result(for: one)).bytes == 1000)
        #expect(try Self.counted(try await second.result(for: two)).bytes == 2000)

        // The server stored each upload once; a relaunch finds both, completed.
        #expect(try await TestServers.requestCount("POST /uploads/count", namespace: namespace) == 2)
        let relaunched = try UploadManager(client: client, directory: directory, policy: UploadFixtures.policy)
        let states = Dictionary(uniqueKeysWithValues: await relaunched.uploads.map { ($0.id, $0.state) })
        #expect(states == [one: .completed(statusCode: 200), two: .completed(statusCode: 200)])
    }
}

extension UploadManagerTests {
    /// Waits (at most 20 s) until `/uploads/count` of `namespace` has `count` attempts.
    static func waitForAttempts(_ count: Int, namespace: String) async throws {
        let clock = ContinuousClock()
        let limit = clock.now.advanced(by: .seconds(20))
        while clock.now < limit {
            let uploads = try await TestServers.stats(namespace: namespace)["uploads"] as? [String: Any]
            if (uploads?["attempts"] as? Int ?? 0) >= count { return }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("a manager released mid-upload stops it: the server stores the file once, from the manager that resumes it")
    func aReleasedManagersUploadIsStoredOnce() async throws {
        let (client, namespace) = try UploadFixtures.client()
        let directory = try UploadFixtures.folder()
        let data = UploadFixtures.bytes(2 << 20)
        let original = try UploadFixtures.file(data)
        do {
            let released = try UploadManager(client: client, directory: directory, policy: UploadFixtures.policy)
            // The server reads 256 KiB a second: the first sending is on the wire for 8 s.
            _ = try await released.enqueue(
                fileAt: original, to: "/uploads/count?delay=1", method: .put, contentType: "application/octet-stream")
            try await Self.waitForAttempts(1, namespace: namespace)
        }
        // The app rebuilt its objects (after a sign-in, say) while the upload was on the wire.
        let next = try UploadManager(client: client, directory: directory, policy: UploadFixtures.policy)
        await next.resumePending()
        let id = try #require(await next.uploads.first?.id)
        let result = try Self.counted(try await next.result(for: id))
        #expect(result.sha256 == UploadFixtures.sha256(data))
        let uploads = try await TestServers.stats(namespace: namespace)["uploads"] as? [String: Any]
        #expect(uploads?["attempts"] as? Int == 2)
        #expect(uploads?["completed"] as? Int == 1, "stored once, not by both managers")
    }

    /// An app's manager on a new folder sending a 2 MiB `PUT` to `route` (foreground, or handed to
    /// a background session of its own), once the server counts its attempt.
    static func appSending(
        to route: String, background: Bool = false
    ) async throws -> (client: APIClient, namespace: String, directory: URL, data: Data, app: UploadManager, id: UUID) {
        let (client, namespace) = try UploadFixtures.client()
        let directory = try UploadFixtures.folder()
        let data = UploadFixtures.bytes(2 << 20)
        let original = try UploadFixtures.file(data)
        let app = try UploadManager(
            client: client, directory: directory,
            backgroundTransport: background ? URLSessionBackgroundTransport(configuration: .ephemeral) : nil,
            policy: UploadFixtures.policy)
        let id = try await app.enqueue(
            fileAt: original, to: route, method: .put, contentType: "application/octet-stream",
            mode: background ? .background : .foreground)
        try await waitForAttempts(1, namespace: namespace)
        return (client, namespace, directory, data, app, id)
    }

    @Test("a manager that cannot read the registry leaves an upload its last reading showed another live manager sending")
    func anUnreadableRegistryDoesNotSendAnotherManagersUploadAgain() async throws {
        let (client, namespace, directory, data, app, id) = try await Self.appSending(to: "/uploads/count?gate=unread")
        // The extension read the registry while the app sends; then the registry cannot be read
        // (a non-empty directory in its place, which stops root too).
        let sharing = try UploadManager(client: client, directory: directory, policy: UploadFixtures.policy)
        let registry = directory.appendingPathComponent("uploads.json")
        try FileManager.default.removeItem(at: registry)
        try FileManager.default.createDirectory(at: registry, withIntermediateDirectories: true)
        try Data("x".utf8).write(to: registry.appendingPathComponent("keep"))

        await sharing.resumePending()
        await #expect(throws: NetworkError.self, "asked there: it says another manager sends it") {
            _ = try await sharing.result(for: id)
        }

        // The server answers the app (it held the answer until now, whatever the machine's load).
        let (opened, _) = try await TestServers.control("POST", "_gates/unread/open", namespace: namespace)
        #expect(opened == 200)
        #expect(try Self.counted(try await app.result(for: id)).sha256 == UploadFixtures.sha256(data))
        let uploads = try await TestServers.stats(namespace: namespace)["uploads"] as? [String: Any]
        #expect(uploads?["attempts"] as? Int == 1, "sent once, by the app")
    }

    @Test("result(for:) of a background upload another live manager handed to its session says so at once; no endless wait")
    func anotherManagersBackgroundUploadIsNotAwaitedForever() async throws {
        let (client, namespace, directory, _, app, id) = try await Self.appSending(
            to: "/uploads/count?stall=262144", background: true)
        // The extension has a background session of its own: the app's task's events never reach it.
        let sharing = try UploadManager(
            client: client, directory: directory, backgroundTransport: URLSessionBackgroundTransport(configuration: .ephemeral),
            policy: UploadFixtures.policy)
        await sharing.resumePending()

        try await Self.expectLeftToTheApp(id, asked: sharing, app: app, namespace: namespace)
    }

    @Test("result(for:) of an upload another live manager sends says so at once, also before resumePending; no endless wait")
    func anotherManagersUploadIsNotAwaitedBeforeResumePending() async throws {
        let (client, namespace, directory, _, app, id) = try await Self.appSending(to: "/uploads/count?stall=262144")
        // The extension shows the app's upload before it resumes anything.
        let sharing = try UploadManager(client: client, directory: directory, policy: UploadFixtures.policy)

        try await Self.expectLeftToTheApp(id, asked: sharing, app: app, namespace: namespace)
    }

    /// Asked in the extension, `result(for:)` says at once (within 10 s) that another manager sends
    /// upload `id`; the app, whose sending the server holds (it read 256 KiB), then gives up on it,
    /// and the server saw one attempt: the app's.
    static func expectLeftToTheApp(_ id: UUID, asked sharing: UploadManager, app: UploadManager, namespace: String) async throws {
        let asked = Task { () -> String in
            do {
                _ = try await sharing.result(for: id)
                return "returned"
            } catch {
                return "threw \(error)"
            }
        }
        let answer = await outcome(of: asked, within: .seconds(10))
        #expect(answer?.contains("another manager") == true, "asked there: \(answer ?? "still waiting after 10 s")")

        try await app.cancel(id)
        await #expect(throws: NetworkError.self) { _ = try await app.result(for: id) }
        let uploads = try await TestServers.stats(namespace: namespace)["uploads"] as? [String: Any]
        #expect(uploads?["attempts"] as? Int == 1, "sent by the app alone")
    }

    @Test("cancel of an upload another live manager is sending says it cannot stop it, and leaves it to that manager")
    func cancellingAnotherManagersUploadThrows() async throws {
        let (client, namespace, directory, data, app, id) = try await Self.appSending(to: "/uploads/count?gate=app")
        let sharing = try UploadManager(client: client, directory: directory, policy: UploadFixtures.policy)

        // The user cancels it in the extension: the extension cannot stop the app's sending.
        await #expect(throws: NetworkError.self) { try await sharing.cancel(id) }
        #expect(await sharing.uploads.map(\.id) == [id], "not removed there as if it had stopped")
        #expect(Self.staged(directory).count == 1, "its staged copy stays for the app")

        // The server answers the app (it held the answer until now, whatever the machine's load).
        let (opened, _) = try await TestServers.control("POST", "_gates/app/open", namespace: namespace)
        #expect(opened == 200)

        #expect(try Self.counted(try await app.result(for: id)).sha256 == UploadFixtures.sha256(data))
        let uploads = try await TestServers.stats(namespace: namespace)["uploads"] as? [String: Any]
        #expect(uploads?["completed"] as? Int == 1)
        // Once the app's outcome is in the registry, the extension may remove the record.
        try await sharing.cancel(id)
        #expect(await sharing.uploads.isEmpty)
    }
}

/// A background transport standing in for a session recreated at launch: it starts nothing and
/// delivers the events the test hands it.
final class RelaunchedTransport: BackgroundTransport {
    let events: AsyncStream<BackgroundTransferEvent>
    private let continuation: AsyncStream<BackgroundTransferEvent>.Continuation
    private let running: [String]
    let started = Locked<[String]>([])

    init(running: [String]) {
        (events, continuation) = AsyncStream.makeStream(of: BackgroundTransferEvent.self)
        self.running = running
    }

    func deliver(_ event: BackgroundTransferEvent) { continuation.yield(event) }
    func startUpload(_ request: URLRequest, fromFile fileURL: URL, taskDescription: String) throws {
        started.withLock { $0.append(taskDescription) }
    }
    func startDownload(_ request: URLRequest, taskDescription: String) throws {
        started.withLock { $0.append(taskDescription) }
    }
    func runningTaskDescriptions() async -> [String] { running }
    func cancelTask(withDescription taskDescription: String) async {}
}
