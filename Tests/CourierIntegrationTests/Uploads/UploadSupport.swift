import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Courier
import CourierTesting
import CourierTransfers

/// What `/uploads/count` reports about one upload.
struct CountedUpload: Decodable, Sendable {
    var attempt: Int
    var bytes: Int
    var sha256: String
    var contentLength: String?
    var transferEncoding: String?
}

/// What `/uploads/multipart` reports: every part the strict parser found.
struct ParsedForm: Decodable, Sendable {
    struct Part: Decodable, Sendable {
        var name: String
        var nameHex: String
        var filename: String?
        var filenameHex: String?
        var contentType: String?
        var headers: [[String]]
        var sha256: String
        var length: Int
    }
    var parts: [Part]
    var bytes: Int
    var boundary: String
    var contentLength: String?
}

enum UploadFixtures {
    /// SHA-256 as lower-case hex.
    static func sha256(_ data: Data) -> String {
        SHA256.hash(data).map { String(format: "%02x", $0) }.joined()
    }

    /// SHA-256 of the file at `url` as lower-case hex, from coreutils' `sha256sum` in a child
    /// process (a second implementation), on a thread of its own. For bodies of many MiB: Courier's
    /// SHA-256 in a debug build hashes about 4 MiB per CPU second, and hashing 32 MiB twice on the
    /// cooperative pool of a 2-core machine stalled every test of the parallel pass for seconds.
    /// Falls back to ``sha256(_:)`` where `sha256sum` is missing.
    static func sha256(file url: URL) async throws -> String {
        let tool = URL(fileURLWithPath: "/usr/bin/sha256sum")
        guard FileManager.default.isExecutableFile(atPath: tool.path) else { return sha256(try Data(contentsOf: url)) }
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("courier-sha-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: output) }
        // Not Foundation.Process: its run() can crash a process with many sockets open (ChildProcess).
        let child = try ChildProcess.run(tool, arguments: ["--", url.path], standardOutput: output)
        guard await child.terminationStatus == 0,
            let hex = String(decoding: try Data(contentsOf: output), as: UTF8.self).split(separator: " ").first
        else { throw CocoaError(.fileReadUnknown) }
        return String(hex)
    }

    /// Lower-case hex of the UTF-8 bytes of `text`.
    static func hex(_ text: String) -> String { Data(text.utf8).map { String(format: "%02x", $0) }.joined() }

    /// Deterministic bytes: byte i is `((i % 256) * 31 + seed) % 256`.
    static func bytes(_ count: Int, seed: Int = 7) -> Data {
        // One 256-byte block repeated (memcpy-fast even in debug builds, so tests running in
        // parallel keep their cooperative threads).
        let block = Data((0..<256).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ seed) })
        var data = Data(capacity: count)
        while data.count + block.count <= count { data.append(block) }
        data.append(block.prefix(count - data.count))
        return data
    }

    /// A new file of `data` in a fresh temporary folder; returns its URL.
    static func file(_ data: Data, name: String = "upload.bin") throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-up-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let url = folder.appendingPathComponent(name)
        try data.write(to: url)
        return url
    }

    /// A fresh empty folder.
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-up-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    /// A client for the reference server with retries that never really sleep.
    static func client(namespace: String = TestServers.makeNamespace("up")) throws -> (APIClient, String) {
        try TestServers.apiClient(namespace: namespace) {
            $0.interceptors = .standard(retry: RetryInterceptor(clock: TestClock()))
        }
    }

    /// The upload policy without auth (the reference routes are public).
    static let policy = EndpointPolicy.authorizedUpload.with(\.auth, .none)
}

/// Collects an upload's progress values in a task.
func collect(_ progress: AsyncStream<TransferProgress>) -> Task<[TransferProgress], Never> {
    Task {
        var values: [TransferProgress] = []
        for await value in progress { values.append(value) }
        return values
    }
}

/// What `task` returned, or `nil` when it still ran after `limit` (it is left behind): a
/// progress reader that never ends fails the test instead of hanging it.
func outcome<T: Sendable>(of task: Task<T, Never>, within limit: Duration = .seconds(20)) async -> T? {
    let (outcomes, report) = AsyncStream.makeStream(of: T?.self)
    Task { report.yield(await task.value) }
    let bound = Task {
        try? await Task.sleep(for: limit)
        report.yield(nil)
    }
    defer { bound.cancel() }
    var iterator = outcomes.makeAsyncIterator()
    return await iterator.next() ?? nil
}
