import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
@testable import Courier
import CourierTesting
@testable import CourierTransfers

/// The offsets a tus server's `HEAD` may report (tus 1.0.0 `Upload-Offset`): never beyond the
/// bytes that can have reached it — after a `409`, the bytes sent before the refused `PATCH`; for
/// a record from disk, the file's length — and, for a record from disk, never below the offset it
/// confirmed to the earlier run. The scripted server keeps the bytes each `PATCH` brings.
@Suite("tus uploads: HEAD offsets after a 409 and on resume")
struct TusOffsetBoundTests {
    /// A tus server that stores what it receives: a `PATCH` at the offset it holds appends its
    /// body; at another offset it answers `409`. `conflicts` are PATCH numbers (from 1) answered
    /// `409` whatever the offset; `head` gives the `HEAD` answer (offset, `Upload-Length`) from the
    /// bytes held.
    final class Server: Sendable {
        let uploads = Locked<[String: Data]>([:])
        let patches = Locked(0)
        let conflicts: Set<Int>
        let head: @Sendable (_ held: Int64) -> (offset: Int64, length: Int64?)
        let uploadLength: Int64

        init(
            uploadLength: Int64, conflicts: Set<Int> = [],
            head: @escaping @Sendable (_ held: Int64) -> (offset: Int64, length: Int64?) = { ($0, nil) }
        ) {
            self.uploadLength = uploadLength
            self.conflicts = conflicts
            self.head = head
        }

        func held(_ path: String) -> Data { uploads.withLock { $0[path] ?? Data() } }

        /// The body of a PATCH as the server reads it (a stream over the file's range).
        static func body(of request: URLRequest) -> Data {
            if let data = request.httpBody { return data }
            guard let stream = request.httpBodyStream else { return Data() }
            stream.open()
            defer { stream.close() }
            var data = Data()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = stream.read(&buffer, maxLength: buffer.count)
                if count <= 0 { break }
                data.append(buffer, count: count)
            }
            return data
        }

        var transport: StubTransport {
            StubTransport { [self] request in
                let url = try #require(request.url)
                let tus = ["Tus-Resumable": "1.0.0"]
                switch request.httpMethod ?? "GET" {
                case "POST":
                    uploads.withLock { $0["/v1/tus/files/new"] = Data() }
                    return HTTPResponse(
                        statusCode: 201, headers: HTTPHeaders(tus.merging(["Location": "/v1/tus/files/new"]) { $1 }),
                        body: Data(),
                        url: url)
                case "HEAD":
                    let answer = head(Int64(held(url.path).count))
                    var fields = tus
                    fields["Upload-Offset"] = String(answer.offset)
                    if let length = answer.length { fields["Upload-Length"] = String(length) }
                    return HTTPResponse(statusCode: 200, headers: HTTPHeaders(fields), body: Data(), url: url)
                default:
                    let number = patches.withLock {
                        $0 += 1
                        return $0
                    }
                    let body = Self.body(of: request)
                    let offset = Int64(request.value(forHTTPHeaderField: "Upload-Offset") ?? "") ?? -1
                    let stored: Int64? = uploads.withLock { uploads in
                        var data = uploads[url.path] ?? Data()
                        guard !conflicts.contains(number), offset == Int64(data.count) else { return nil }
                        data.append(body)
                        uploads[url.path] = data
                        return Int64(data.count)
                    }
                    guard let stored else {
                        return HTTPResponse(
                            statusCode: 409,
                            headers: HTTPHeaders(tus.merging(["Upload-Offset": String(held(url.path).count)]) { $1 }),
                            body: Data(), url: url)
                    }
                    return HTTPResponse(
                        statusCode: 204, headers: HTTPHeaders(tus.merging(["Upload-Offset": String(stored)]) { $1 }),
                        body: Data(),
                        url: url)
                }
            }
        }
    }

    static func uploader(_ transport: StubTransport, _ folder: TusRecordFaultTests.Folder) -> TusUploader {
        TusUploader(
            client: TransfersFixture.client(transport), creationPath: "/tus/files",
            store: ResumableUploadStore(directory: folder.records), chunkSize: 400, policy: .standard)
    }

    static func patchOffsets(_ transport: StubTransport) -> [String] {
        transport.requests.filter { $0.httpMethod == "PATCH" }.map { $0.value(forHTTPHeaderField: "Upload-Offset") ?? "?" }
    }

    static func expectBadServer(_ error: NetworkError?, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .transport(let failure)? = error else {
            Issue.record("expected a bad server response, got \(String(describing: error))", sourceLocation: sourceLocation)
            return
        }
        #expect(failure.code == .badServerResponse, sourceLocation: sourceLocation)
    }

    // MARK: After a 409 Conflict

    /// PATCH 2 (bytes 400..<800) is refused with 409, which leaves the upload as it was: the server
    /// holds 400 bytes, and a HEAD claiming more is wrong. Before, 1000 ended the upload as a
    /// success with 400 bytes on the server, and 700 sent bytes 700..<1000 after a gap.
    @Test(
        "after a 409, a HEAD offset beyond the bytes sent before it fails the upload and drops its record: no byte is skipped",
        arguments: [401, 700, 1000])
    func aConflictsHeadBeyondTheBytesSentIsRefused(claimed: Int64) async throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        let server = Server(uploadLength: 1000, conflicts: [2], head: { _ in (claimed, 1000) })
        let transport = server.transport
        let store = ResumableUploadStore(directory: folder.records)
        let error = await #expect(throws: NetworkError.self) {
            _ = try await Self.uploader(transport, folder).upload(fileAt: folder.file).value
        }
        Self.expectBadServer(error)
        #expect(Self.patchOffsets(transport) == ["0", "400"])
        #expect(transport.requests.map { $0.httpMethod ?? "" } == ["POST", "PATCH", "PATCH", "HEAD"])
        #expect(server.held("/v1/tus/files/new") == folder.bytes.prefix(400))
        #expect(try store.allRecords().isEmpty, "a record a later run would resume from the same offset")
    }

    /// The server lost a tail of this run's bytes (or another reason made it refuse PATCH 2): the
    /// bytes from its offset on are sent again from the file.
    @Test(
        "after a 409, a HEAD offset within the bytes sent is followed, also back: the server ends with the file's exact bytes",
        arguments: [0, 100, 400])
    func aConflictsHeadWithinTheBytesSentIsFollowed(kept: Int) async throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        let server = Server(uploadLength: 1000, conflicts: [2], head: { ($0, 1000) })
        // The server drops what it held past `kept` when it refuses PATCH 2.
        let transport = StubTransport { request in
            if request.httpMethod == "HEAD", let path = request.url?.path {
                server.uploads.withLock { $0[path] = $0[path].map { Data($0.prefix(kept)) } }
            }
            return try await server.transport.send(request)
        }
        let location = try await Self.uploader(transport, folder).upload(fileAt: folder.file).value
        #expect(location.path == "/v1/tus/files/new")
        #expect(server.held("/v1/tus/files/new") == folder.bytes)
        let resent = Array(stride(from: kept, to: 1000, by: 400).map(String.init))
        #expect(Self.patchOffsets(transport) == ["0", "400"] + resent)
    }

    // MARK: The first HEAD of a record from disk

    /// Saves a record of `/v1/tus/files/old` at `confirmed` bytes, as an earlier process did, and
    /// puts `held` of the file's bytes on the server.
    static func earlierRun(_ folder: TusRecordFaultTests.Folder, _ server: Server, confirmed: Int64, held: Int) throws {
        try ResumableUploadStore(directory: folder.records).save(
            ResumableUploadRecord(
                key: TusUploader.key(for: folder.file, creationURL: TusRecordFaultTests.creationURL),
                uploadURL: URL(string: "https://api.example.test/v1/tus/files/old")!, offset: confirmed, length: 1000,
                createdAt: Date(), creationURL: TusRecordFaultTests.creationURL))
        server.uploads.withLock { $0["/v1/tus/files/old"] = folder.bytes.prefix(held) }
    }

    /// The earlier process was confirmed 400 bytes. A HEAD beyond the file (1001, 5000), with
    /// another `Upload-Length`, or below 400 (a server that lost what it confirmed, or a new upload
    /// at a reused URL) is not that upload: nothing is sent to it, the record is dropped and the
    /// next run creates a new upload. Before, an offset below 400 was continued (a splice onto
    /// whatever the URL holds) and one beyond the file silently started a new upload.
    @Test(
        "resuming a record from disk, a HEAD beyond the file, of another Upload-Length or below the offset confirmed fails and drops the record",
        arguments: [(1001, 1000), (5000, nil), (400, 1200), (399, 1000), (0, nil)] as [(Int64, Int64?)])
    func aResumedRecordsImpossibleHeadIsRefused(offset: Int64, length: Int64?) async throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        let server = Server(uploadLength: 1000, head: { _ in (offset, length) })
        try Self.earlierRun(folder, server, confirmed: 400, held: Int(min(offset, 400)))
        let transport = server.transport
        let store = ResumableUploadStore(directory: folder.records)
        let error = await #expect(throws: NetworkError.self) {
            _ = try await Self.uploader(transport, folder).upload(fileAt: folder.file).value
        }
        Self.expectBadServer(error)
        #expect(
            transport.requests.map { $0.httpMethod ?? "" } == ["HEAD"], "nothing is sent to an upload that is not this file's")
        #expect(try store.allRecords().isEmpty)

        // The next run starts a new upload, which ends with the file's exact bytes.
        let next = Server(uploadLength: 1000)
        let location = try await Self.uploader(next.transport, folder).upload(fileAt: folder.file).value
        #expect(location.path == "/v1/tus/files/new")
        #expect(next.held("/v1/tus/files/new") == folder.bytes)
    }

    /// The earlier process was confirmed 400 bytes and may have sent more before it ended (a
    /// PATCH whose answer it never saw): any offset from 400 to the file's length is the server's.
    @Test(
        "resuming a record from disk, a HEAD from the offset confirmed up to the file's length is continued to the exact bytes",
        arguments: [400, 700, 1000])
    func aResumedRecordsPossibleHeadIsContinued(held: Int) async throws {
        let folder = try TusRecordFaultTests.Folder()
        defer { folder.remove() }
        let server = Server(uploadLength: 1000, head: { ($0, 1000) })
        try Self.earlierRun(folder, server, confirmed: 400, held: held)
        let transport = server.transport
        let location = try await Self.uploader(transport, folder).upload(fileAt: folder.file).value
        #expect(location.path == "/v1/tus/files/old")
        #expect(server.held("/v1/tus/files/old") == folder.bytes)
        #expect(transport.requests.first?.httpMethod == "HEAD")
        #expect(!transport.requests.contains { $0.httpMethod == "POST" })
        #expect(
            Self.patchOffsets(transport)
                == Array(stride(from: held, through: held == 1000 ? 1000 : 999, by: 400).map(String.init)))
    }
}
