import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// Background downloads against what a server or a link can do wrong: a status that carries no
/// file, a URL on another origin.
extension BackgroundDownloadsTests {
    @Test("a background download answered 202 or 204 never replaces the destination", arguments: [202, 204])
    func aStatusWithoutAFileNeverReplacesTheDestination(_ status: Int) async throws {
        let folder = BackgroundDownloadsTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("report.pdf")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let old = Data("the previous, complete report".utf8)
        try old.write(to: destination)
        let transport = ManualBackgroundTransport()
        let manager = try BackgroundDownloadsTests.manager(folder, transport)
        let id = try await manager.enqueue("/reports/7", to: destination)
        // 202: "still being generated" with a status document; 204: no content at all.
        let body = status == 202 ? Data(#"{"status":"processing"}"#.utf8) : Data()
        try transport.finish(id.uuidString, body: body, status: status, headers: ["Content-Length": "\(body.count)"])
        await #expect(throws: (any Error).self, "a \(status) carries no file") { _ = try await manager.result(for: id) }
        #expect(try Data(contentsOf: destination) == old, "the destination was replaced by the \(status) body")
    }

    @Test("a background download to another origin gets no access token")
    func noAccessTokenForAnotherOrigin() async throws {
        let folder = BackgroundDownloadsTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = FakeTokenServer(now: Date())
        let tokens = FakeTokenServer.tokenManager(server.makeTransport(), store: InMemoryTokenStore(server.signIn()))
        let transport = ManualBackgroundTransport()
        let manager = try BackgroundDownloads(
            client: TransfersFixture.client(StubTransport(responses: [HTTPResponse]())),
            directory: folder.appendingPathComponent("m"), transport: transport, tokenManager: tokens)
        _ = try? await manager.enqueue(
            "https://cdn.third-party.test/exports/7.zip", to: folder.appendingPathComponent("7.zip"))
        let handed = try #require(transport.started.withLock { $0.first }, "refusing the hand-over would also pass")
        #expect(handed.request?.url?.host == "cdn.third-party.test")
        #expect(
            handed.request?.value(forHTTPHeaderField: "Authorization") == nil,
            "the environment's access token was handed to cdn.third-party.test")
    }
}

extension BackgroundDownloadsTests {
    /// A task resumed by the system ends with `206 bytes 5-9/*`: the file is the 5 bytes it had
    /// joined with this part, and nothing says the representation ends there. Before, it was
    /// placed as the file with its length taken from the part's end.
    @Test(
        "a background download ending with a 206 of unknown length is the file only when a digest of the whole file proves it",
        arguments: ["none", "Repr-Digest", "Content-Digest", "wrong Repr-Digest"])
    func anUnknownLengthPartNeedsAWholeFileDigest(_ digest: String) async throws {
        let folder = BackgroundDownloadsTests.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let destination = folder.appendingPathComponent("video.mp4")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let joined = Data("0123456789".utf8)
        let transport = ManualBackgroundTransport()
        let manager = try BackgroundDownloadsTests.manager(folder, transport)
        let id = try await manager.enqueue("/videos/7", to: destination)
        var headers: HTTPHeaders = ["Content-Range": "bytes 5-9/*", "Content-Length": "5", "ETag": #""v1""#]
        let whole = ":\(Data(SHA256.hash(joined)).base64EncodedString()):"
        switch digest {
        case "Repr-Digest": headers.replace("Repr-Digest", with: "sha-256=\(whole)")
        case "Content-Digest":
            headers.replace("Content-Digest", with: "sha-256=:\(Data(SHA256.hash(joined.suffix(5))).base64EncodedString()):")
        case "wrong Repr-Digest":
            headers.replace("Repr-Digest", with: "sha-256=:\(Data(SHA256.hash(Data("other".utf8))).base64EncodedString()):")
        default: break
        }
        try transport.finish(id.uuidString, body: joined, status: 206, headers: headers)
        if digest == "Repr-Digest" {
            #expect(try await manager.result(for: id) == destination)
            #expect(try Data(contentsOf: destination) == joined)
        } else {
            await #expect(throws: DownloadError.self) { _ = try await manager.result(for: id) }
            #expect(!FileManager.default.fileExists(atPath: destination.path), "a file not proven whole was placed")
        }
    }
}
