import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// A persistent upload that meets no network is not lost: it stays pending with its staged copy
/// and goes out again at the next `resumePending()`; a failure its policy would not retry ends it.
@Suite("UploadManager: network failures keep the upload")
struct UploadNetworkFailureTests {
    static func folder() throws -> (root: URL, source: URL) {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("upload-net-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let source = root.appendingPathComponent("photo.jpg")
        try Data(repeating: 5, count: 2048).write(to: source)
        return (root, source)
    }

    /// A manager in `root` on `transport` (policy `.standard`, no retries) and an upload whose
    /// first attempt failed.
    static func failedOnce(_ transport: StubTransport, in root: URL, source: URL) async throws -> (UploadManager, UUID) {
        let manager = try UploadManager(
            client: TransfersFixture.client(transport), directory: root.appendingPathComponent("manager"),
            policy: .standard)
        let id = try await manager.enqueue(fileAt: source, to: "/photos", contentType: "image/jpeg")
        await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }
        return (manager, id)
    }

    static func staged(_ root: URL) throws -> [String] {
        let folder = root.appendingPathComponent("manager/staged")
        guard FileManager.default.fileExists(atPath: folder.path) else { return [] }
        return try FileManager.default.contentsOfDirectory(atPath: folder.path)
    }

    /// A screen awaiting an upload goes away: its wait ends with `NetworkError.cancelled` at once
    /// (it waited until the upload finished, forever for one the session no longer runs), while
    /// the upload and the other waiters go on.
    @Test("cancelling a task awaiting result(for:) ends its wait; the upload and other waiters go on")
    func cancellingAResultWaitEndsIt() async throws {
        let (root, source) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let background = ManualBackgroundTransport()
        let manager = try UploadManager(
            client: TransfersFixture.client(StubTransport(responses: [HTTPResponse]())),
            directory: root.appendingPathComponent("manager"), backgroundTransport: background)
        let id = try await manager.enqueue(fileAt: source, to: "/photos", contentType: "image/jpeg", mode: .background)
        let leaving = Task { try await manager.result(for: id) }
        let staying = Task { try await manager.result(for: id) }
        leaving.cancel()

        let outcome = await TransfersFixture.firstOutcome(of: leaving, orAfter: .seconds(30))

        #expect(outcome == "cancelled")
        background.continuation.yield(
            BackgroundTransferEvent(
                taskDescription: id.uuidString, outcome: .uploaded(statusCode: 201, headers: HTTPHeaders(), body: Data())))
        #expect(try await staying.value.statusCode == 201)
    }

    @Test("offline: the upload stays pending with its staged copy, and resumePending sends it when the network is back")
    func offlineUploadWaitsForTheNetwork() async throws {
        let (root, source) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let online = Locked(false)
        let transport = StubTransport { request in
            guard online.current else { throw URLError(.notConnectedToInternet) }
            return HTTPResponse(statusCode: 201, body: Data("{}".utf8), url: request.url)
        }
        let (manager, id) = try await Self.failedOnce(transport, in: root, source: source)
        #expect(await manager.uploads.map(\.state) == [.pending])
        #expect(try Self.staged(root).count == 1, "the staged copy is kept")
        // Asked again while it waits for the network: the failure at once, not an endless wait.
        await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }

        online.set(true)
        await manager.resumePending()
        #expect(try await manager.result(for: id).statusCode == 201)
        #expect(transport.requestCount == 2)
        #expect(try Self.staged(root).isEmpty)
        #expect(await manager.uploads.map(\.state) == [.completed(statusCode: 201)])
    }

    @Test("a 503 after the retries keeps the upload pending too; it is not a completed upload")
    func unavailableServerKeepsTheUpload() async throws {
        let (root, source) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let transport = StubTransport(responses: [
            HTTPResponse(statusCode: 503, body: Data()), HTTPResponse(statusCode: 201, body: Data("{}".utf8)),
        ])
        let (manager, id) = try await Self.failedOnce(transport, in: root, source: source)
        #expect(await manager.uploads.map(\.state) == [.pending])
        #expect(try Self.staged(root).count == 1)
        await manager.resumePending()
        #expect(try await manager.result(for: id).statusCode == 201)
    }

    @Test("a failure the policy would not retry (400) fails the upload for good and removes the staged copy")
    func rejectedUploadFails() async throws {
        let (root, source) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let transport = StubTransport(responses: [HTTPResponse(statusCode: 400, body: Data("{}".utf8))])
        let (manager, _) = try await Self.failedOnce(transport, in: root, source: source)
        guard case .failed = try #require(await manager.uploads.first).state else {
            Issue.record("expected failed")
            return
        }
        #expect(try Self.staged(root).isEmpty)
    }

    /// A keyless `POST` (policy `.standard`) may have been stored when the connection was lost or
    /// the call timed out, or when a gateway answered 502/504: it fails for good, as the client's
    /// retries would not repeat it either. A `PUT`, or the same failure before any connection, stays
    /// pending.
    @Test(
        "a keyless POST that may have reached the server fails for good; a PUT or a failure before any connection stays pending",
        arguments: [
            (HTTPMethod.post, URLError.Code.networkConnectionLost, false), (.post, .timedOut, false),
            (.post, .cannotConnectToHost, true), (.put, .networkConnectionLost, true),
        ])
    func keylessPostIsNotRepeated(_ method: HTTPMethod, _ code: URLError.Code, _ staysPending: Bool) async throws {
        let (root, source) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let transport = StubTransport { _ in throw URLError(code) }
        let manager = try UploadManager(
            client: TransfersFixture.client(transport), directory: root.appendingPathComponent("manager"),
            policy: .standard)
        let id = try await manager.enqueue(fileAt: source, to: "/photos", method: method, contentType: "image/jpeg")
        await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }
        await manager.resumePending()
        await #expect(throws: NetworkError.self) { _ = try await manager.result(for: id) }
        let state = try #require(await manager.uploads.first).state
        if staysPending {
            #expect(state == .pending)
            #expect(transport.requestCount == 2)
            // A relaunch sends it too: the failure showed that it never reached a server.
            await manager.endAsIfTheProcessEnded()
            let relaunched = try UploadManager(
                client: TransfersFixture.client(transport), directory: root.appendingPathComponent("manager"),
                policy: .standard)
            await relaunched.resumePending()
            await #expect(throws: NetworkError.self) { _ = try await relaunched.result(for: id) }
            #expect(transport.requestCount == 3)
        } else {
            #expect(state != .pending)
            #expect(transport.requestCount == 1)
            #expect(try Self.staged(root).isEmpty)
        }
    }

    @Test(
        "a gateway's 502 or 504 to a keyless POST fails it for good; a 503 (not handled) keeps it pending", arguments: [502, 504])
    func keylessPostAfterAGatewayErrorIsNotRepeated(_ status: Int) async throws {
        let (root, source) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let transport = StubTransport(responses: [HTTPResponse(statusCode: status, body: Data())])
        let (manager, _) = try await Self.failedOnce(transport, in: root, source: source)
        guard case .failed = try #require(await manager.uploads.first).state else {
            Issue.record("expected failed")
            return
        }
        #expect(try Self.staged(root).isEmpty)
    }

    @Test("every reader of an upload's progress gets every value, the last one included")
    func progressHasAnyNumberOfReaders() async throws {
        let (root, source) = try Self.folder()
        defer { try? FileManager.default.removeItem(at: root) }
        let released = Locked(false)
        let transport = StubTransport { request in
            for _ in 0..<5000 where !released.current { try await Task.sleep(for: .milliseconds(2)) }
            return HTTPResponse(statusCode: 201, body: Data("{}".utf8), url: request.url)
        }
        let manager = try UploadManager(
            client: TransfersFixture.client(transport), directory: root.appendingPathComponent("manager"), policy: .standard)
        let id = try await manager.enqueue(fileAt: source, to: "/photos", contentType: "image/jpeg")
        let readers = try await (0..<3).asyncMap { _ in try #require(await manager.progress(for: id)) }
        let collected = readers.map { stream in Task { await stream.reduce(into: [Int64]()) { $0.append($1.completedBytes) } } }
        released.set(true)
        #expect(try await manager.result(for: id).statusCode == 201)
        var lasts: [Int64?] = []
        for task in collected { lasts.append(await task.value.last) }
        #expect(lasts == [2048, 2048, 2048], "each reader sees the upload end: \(lasts)")
        #expect(await manager.progress(for: id) == nil, "no progress once the upload ended")
    }
}

extension Sequence {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}
