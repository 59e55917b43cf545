import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// A tus upload whose stored record or whose server's offset cannot be trusted: it never starts
/// over from byte 0 on a guess, and never sends a PATCH beyond the file.
@Suite("tus uploads: unreadable records and impossible offsets")
struct TusRecordFaultTests {
    struct Folder {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("tus-faults-\(UUID().uuidString)")
        var records: URL { root.appendingPathComponent("records", isDirectory: true) }
        var file: URL { root.appendingPathComponent("clip.mov") }
        let bytes = Data((0..<1000).map { UInt8($0 % 251) })

        init() throws {
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
            try bytes.write(to: file)
        }

        /// The one record file of the store.
        func recordFile() throws -> URL {
            let names = try FileManager.default.contentsOfDirectory(atPath: records.path).filter { $0.hasSuffix(".json") }
            return records.appendingPathComponent(try #require(names.first))
        }

        func remove() { try? FileManager.default.removeItem(at: root) }
    }

    /// A tus server in a handler: creation answers `location` (by default `/tus/files/new`), HEAD
    /// answers `headOffset()`, and `patch` answers each PATCH from its number (from 1), URL,
    /// `Upload-Offset` and length — by default it confirms what it was sent.
    static func server(
        location: @escaping @Sendable (URL) -> String = { _ in "/v1/tus/files/new" },
        headOffset: @escaping @Sendable () -> Int64,
        patch: @escaping @Sendable (_ number: Int, _ url: URL, _ offset: Int64, _ length: Int64) throws -> HTTPResponse = {
            confirm($2 + $3, url: $1)
        }
    ) -> StubTransport {
        let patches = Locked(0)
        return StubTransport { request in
            let url = try #require(request.url)
            switch request.httpMethod ?? "GET" {
            case "POST":
                return HTTPResponse(
                    statusCode: 201, headers: ["Location": location(url), "Tus-Resumable": "1.0.0"], body: Data(), url: url)
            case "HEAD":
                return HTTPResponse(
                    statusCode: 200, headers: ["Upload-Offset": String(headOffset()), "Tus-Resumable": "1.0.0"], body: Data(),
                    url: url)
            default:
                let number = patches.withLock { count -> Int in
                    count += 1
                    return count
                }
                let offset = Int64(request.value(forHTTPHeaderField: "Upload-Offset") ?? "") ?? -1
                let length = Int64(request.value(forHTTPHeaderField: "Content-Length") ?? "") ?? -1
                return try patch(number, url, offset, length)
            }
        }
    }

    /// A tus server whose HEAD answers `headOffset` and whose PATCHes confirm what they are sent.
    static func server(headOffset: Int64) -> StubTransport { server(headOffset: { headOffset }) }

    /// A PATCH answer confirming `offset`.
    static func confirm(_ offset: Int64, url: URL) -> HTTPResponse {
        HTTPResponse(
            statusCode: 204, headers: ["Upload-Offset": String(offset), "Tus-Resumable": "1.0.0"], body: Data(), url: url)
    }

    static func uploader(_ transport: StubTransport, _ folder: Folder) -> TusUploader {
        TusUploader(
            client: TransfersFixture.client(transport), creationPath: "/tus/files",
            store: ResumableUploadStore(directory: folder.records), chunkSize: 400, policy: .standard)
    }

    @Test("a record that does not read back fails the upload, is left as it is, and nothing is sent")
    func unreadableRecordIsNotTakenForNone() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let store = ResumableUploadStore(directory: folder.records)
        let key = TusUploader.key(for: folder.file, creationURL: Self.creationURL)
        try store.save(
            ResumableUploadRecord(
                key: key, uploadURL: URL(string: "https://api.example.test/v1/tus/files/old")!, offset: 800,
                length: 1000, createdAt: Date()))
        let recordFile = try folder.recordFile()
        let garbage = Data("{\"key\": \"truncated".utf8)
        try garbage.write(to: recordFile)

        let transport = Self.server(headOffset: 800)
        let error = await #expect(throws: ResumableUploadStoreError.self) {
            _ = try await Self.uploader(transport, folder).upload(fileAt: folder.file).value
        }
        guard case .recordUnreadable(let path, _) = error else { return }
        #expect(path == recordFile.path)
        #expect(transport.requestCount == 0, "no new upload was created, nothing was sent")
        #expect(try Data(contentsOf: recordFile) == garbage)
        #expect(throws: ResumableUploadStoreError.self) { try store.allRecords() }
    }

    @Test("a missing store folder has no records; a missing record is none")
    func missingIsEmpty() throws {
        let folder = try Folder()
        defer { folder.remove() }
        let store = ResumableUploadStore(directory: folder.records)
        #expect(try store.allRecords().isEmpty)
        #expect(try store.record(for: "nothing") == nil)
    }
}

extension TusRecordFaultTests {
    static let creationURL = URL(string: "https://api.example.test/v1/tus/files")!

    @Test("an uploader never resumes the upload another uploader of the same store created elsewhere")
    func anotherEndpointsUploadIsNotResumed() async throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        let transport = TusRecordFaultTests.server(
            location: { $0.path + "/up-1" }, headOffset: { 400 },
            patch: { _, url, offset, length in
                // The avatars run is interrupted.
                url.path.contains("/avatars/") && offset >= 400
                    ? HTTPResponse(statusCode: 503, body: Data(), url: url)
                    : TusRecordFaultTests.confirm(offset + length, url: url)
            })
        let store = ResumableUploadStore(directory: folder.records)  // one store per app, as in the docs
        let client = TransfersFixture.client(transport)
        let avatars = TusUploader(client: client, creationPath: "/avatars", store: store, chunkSize: 400, policy: .standard)
        let videos = TusUploader(client: client, creationPath: "/videos", store: store, chunkSize: 400, policy: .standard)
        await #expect(throws: NetworkError.self) { _ = try await avatars.upload(fileAt: folder.file).value }

        let location = try await videos.upload(fileAt: folder.file).value
        #expect(location.path.hasPrefix("/v1/videos/"), "the /videos upload returned \(location.path)")
        let sent = transport.requests.map { "\($0.httpMethod ?? "") \($0.url?.path ?? "")" }.joined(separator: ", ")
        #expect(
            transport.requests.contains { $0.httpMethod == "POST" && $0.url?.path == "/v1/videos" },
            "no upload was ever created at /videos; requests: \(sent)")
    }

    @Test("a PATCH answer confirming more bytes than were sent fails the upload: no byte is skipped")
    func anOffsetBeyondTheBytesSentIsRefused() async throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        // A faulty server (or proxy) confirms 200 bytes it never got after the first chunk.
        let transport = TusRecordFaultTests.server(
            headOffset: { 0 },
            patch: { _, url, offset, length in
                TusRecordFaultTests.confirm(offset == 0 ? offset + length + 200 : offset + length, url: url)
            })
        _ = try? await TusRecordFaultTests.uploader(transport, folder).upload(fileAt: folder.file).value
        let patches = transport.requests.filter { $0.httpMethod == "PATCH" }
        let offsets = patches.map { $0.value(forHTTPHeaderField: "Upload-Offset") ?? "?" }
        #expect(!offsets.contains("600"), "PATCH offsets \(offsets): bytes 400..<600 were never sent")
    }

    @Test("an Upload-Metadata key with a comma or a space is refused before anything is sent")
    func metadataKeysCannotInjectPairs() async throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        let transport = TusRecordFaultTests.server(headOffset: 0)
        let evil = Data("evil.exe".utf8).base64EncodedString()
        _ = try? await TusRecordFaultTests.uploader(transport, folder)
            .upload(fileAt: folder.file, metadata: ["note \(evil),filename": "holiday"]).value
        let post = transport.requests.first { $0.httpMethod == "POST" }
        let header = post?.value(forHTTPHeaderField: "Upload-Metadata")
        #expect(post == nil, "sent Upload-Metadata: \(header ?? "")")
    }

    @Test("an upload placed on another origin is refused at creation under an authorized policy, and no record is kept")
    func aForeignLocationIsNotSaved() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let server = FakeTokenServer(now: Date())
        let tokens = FakeTokenServer.tokenManager(server.makeTransport(), store: InMemoryTokenStore(server.signIn()))
        let transport = StubTransport { request in
            HTTPResponse(
                statusCode: 201, headers: ["Location": "https://uploads.elsewhere.test/files/1", "Tus-Resumable": "1.0.0"],
                body: Data(), url: request.url)
        }
        let client = TransfersFixture.client(transport) { $0.interceptors = .standard(tokenManager: tokens) }
        let store = ResumableUploadStore(directory: folder.records)
        let uploader = TusUploader(client: client, creationPath: "/tus/files", store: store, chunkSize: 400)
        let error = await #expect(throws: NetworkError.self) { _ = try await uploader.upload(fileAt: folder.file).value }
        #expect(error?.kind == .invalidRequest)
        #expect(try store.allRecords().isEmpty, "a record would make every later run fail the same way")
        #expect(transport.requests.map { $0.httpMethod ?? "" } == ["POST"])
    }

    /// A PATCH lost on the way (503, then a dropped connection) is not the end: after the
    /// policy's backoff the uploader asks the server's offset and goes on from there.
    @Test("a PATCH that failed on the way is recovered with HEAD after a backoff, within the policy's retries")
    func aFailedPatchIsRecoveredFromTheServersOffset() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let received = Locked<Int64>(0)
        let transport = Self.server(
            headOffset: { received.current },
            patch: { number, url, offset, length in
                if number == 2 { return HTTPResponse(statusCode: 503, body: Data(), url: url) }
                received.set(offset + length)
                // The fourth is stored, but its answer is lost.
                if number == 4 { throw URLError(.networkConnectionLost) }
                return Self.confirm(offset + length, url: url)
            })
        let clock = TestClock()
        let client = TransfersFixture.client(transport) { $0.clock = clock }
        let uploader = TusUploader(
            client: client, creationPath: "/tus/files", store: ResumableUploadStore(directory: folder.records),
            chunkSize: 400, policy: .standard)
        let location = try await uploader.upload(fileAt: folder.file).value
        #expect(location.path == "/v1/tus/files/new")
        #expect(received.current == 1000)
        let sent = transport.requests.map { "\($0.httpMethod ?? "") \($0.value(forHTTPHeaderField: "Upload-Offset") ?? "")" }
        // The 503 stored nothing: PATCH 400 again. The lost answer had stored the last chunk: done.
        #expect(sent == ["POST ", "PATCH 0", "PATCH 400", "HEAD ", "PATCH 400", "PATCH 800", "HEAD "])
        #expect(clock.sleeps.contains { $0 > .zero }, "a backoff before a recovery, on the client's clock")
    }

    @Test("a PATCH that keeps failing ends the upload after the policy's retries; the record stays for a later run")
    func aPatchThatKeepsFailingEndsTheUpload() async throws {
        let folder = try Folder()
        defer { folder.remove() }
        let transport = Self.server(
            headOffset: { 0 }, patch: { _, url, _, _ in HTTPResponse(statusCode: 503, body: Data(), url: url) })
        let clock = TestClock()
        let store = ResumableUploadStore(directory: folder.records)
        let uploader = TusUploader(
            client: TransfersFixture.client(transport) { $0.clock = clock }, creationPath: "/tus/files", store: store,
            chunkSize: 400, policy: .standard.with(\.retry, RetryPolicy(maxRetries: 2)))
        let error = await #expect(throws: NetworkError.self) { _ = try await uploader.upload(fileAt: folder.file).value }
        #expect(error?.statusCode == 503)
        #expect(transport.requests.filter { $0.httpMethod == "PATCH" }.count == 3, "the first attempt and two retries")
        #expect(try store.allRecords().count == 1)
    }
}

extension TusRecordFaultTests {
    /// Uploads `folder.file` over `transport` in 400-byte chunks with two immediate retries,
    /// expects the upload to fail as a bad server's (`NetworkError.transport`), and returns its
    /// record store and the `Upload-Offset` of every PATCH sent.
    static func runRefusedAsABadServer(
        over transport: StubTransport, folder: TusRecordFaultTests.Folder
    ) async -> (ResumableUploadStore, [String]) {
        let store = ResumableUploadStore(directory: folder.records)
        let uploader = TusUploader(
            client: TransfersFixture.client(transport), creationPath: "/tus/files", store: store, chunkSize: 400,
            policy: .standard.with(\.retry, RetryPolicy(maxRetries: 2, baseDelay: .zero, maxDelay: .zero)))
        let error = await #expect(throws: NetworkError.self) { _ = try await uploader.upload(fileAt: folder.file).value }
        #expect(error?.kind == .transport, "a bad server, not a bad request: \(String(describing: error))")
        let offsets = transport.requests.filter { $0.httpMethod == "PATCH" }.map {
            $0.value(forHTTPHeaderField: "Upload-Offset") ?? "?"
        }
        return (store, offsets)
    }

    @Test("after a failed PATCH, a HEAD offset beyond every byte sent fails the upload and drops its record: no byte is skipped")
    func aHeadOffsetBeyondTheBytesSentIsRefused() async throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        // The second PATCH (bytes 400..<800) fails; the server's HEAD then claims 900 bytes.
        let transport = TusRecordFaultTests.server(
            headOffset: { 900 },
            patch: { number, url, offset, length in
                number == 2
                    ? HTTPResponse(statusCode: 503, headers: ["Retry-After": "0"], body: Data(), url: url)
                    : TusRecordFaultTests.confirm(offset + length, url: url)
            })
        let (store, offsets) = await Self.runRefusedAsABadServer(over: transport, folder: folder)
        #expect(offsets == ["0", "400"], "PATCH offsets \(offsets): bytes 800..<900 were never sent")
        #expect(try store.allRecords().isEmpty, "a record a later run would resume from the same offset")
    }
}

extension TusRecordFaultTests {
    @Test(
        "a store reset at sign-out while a PATCH is in flight stays reset: the run ends signed out, the next creates a new upload",
        .timeLimit(.minutes(1)))
    func aStoreResetDuringARunIsNotUndoneByIt() async throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        let store = ResumableUploadStore(directory: folder.records)
        let creations = Locked(0)
        let patches = Locked(0)
        let transport = StubTransport { request in
            let url = try #require(request.url)
            switch request.httpMethod ?? "GET" {
            case "POST":
                let number = creations.withLock { count -> Int in
                    count += 1
                    return count
                }
                return HTTPResponse(
                    statusCode: 201, headers: ["Location": "/v1/tus/files/up-\(number)", "Tus-Resumable": "1.0.0"],
                    body: Data(), url: url)
            case "HEAD":
                return HTTPResponse(
                    statusCode: 200, headers: ["Upload-Offset": "400", "Tus-Resumable": "1.0.0"], body: Data(), url: url)
            default:
                // The app signs out while the first PATCH is on its way (a request in flight may still
                // finish): the server confirms it after the reset.
                if patches.withLock({ count -> Int in
                    count += 1
                    return count
                }) == 1 {
                    try await store.resetSession()
                }
                let offset = Int64(request.value(forHTTPHeaderField: "Upload-Offset") ?? "") ?? -1
                let length = Int64(request.value(forHTTPHeaderField: "Content-Length") ?? "") ?? -1
                return TusRecordFaultTests.confirm(offset + length, url: url)
            }
        }
        let uploader = TusRecordFaultTests.uploader(transport, folder)
        await #expect(throws: NetworkError.signedOut) { _ = try await uploader.upload(fileAt: folder.file).value }
        #expect(try store.allRecords().isEmpty, "the record removed at sign-out was written back")
        #expect(patches.current == 1, "nothing more was sent after the reset")

        // The next account uploads the same file: a new upload, not the previous account's.
        let location = try await uploader.upload(fileAt: folder.file).value
        #expect(location.lastPathComponent == "up-2")
        #expect(creations.current == 2)
    }
}

extension TusRecordFaultTests {
    /// After a 410 the run starts a new upload from byte 0: only the bytes sent to that one can
    /// have reached it, not those the expired upload got.
    @Test func afterANewUploadAHeadOffsetBeyondTheBytesItWasSentIsRefused() async throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        // PATCH 2 (400..<800) meets 410; the new upload's first PATCH (0..<400) fails; its HEAD
        // claims 800 bytes, which only the expired upload was sent.
        let transport = TusRecordFaultTests.server(
            headOffset: { 800 },
            patch: { number, url, offset, length in
                switch number {
                case 2: HTTPResponse(statusCode: 410, headers: ["Tus-Resumable": "1.0.0"], body: Data(), url: url)
                case 3: HTTPResponse(statusCode: 503, headers: ["Retry-After": "0"], body: Data(), url: url)
                default: TusRecordFaultTests.confirm(offset + length, url: url)
                }
            })
        let (store, offsets) = await Self.runRefusedAsABadServer(over: transport, folder: folder)
        #expect(offsets == ["0", "400", "0"], "PATCH offsets \(offsets): bytes 400..<800 never reached the new upload")
        #expect(try store.allRecords().isEmpty, "a record a later run would resume from the same offset")
    }
}
