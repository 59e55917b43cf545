import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTransfers

/// A download test's world: a client in a fresh namespace of the reference server, a scratch
/// folder for destinations, the server's view of each `/media` request, and the bytes the
/// server's files hold.
struct DownloadFixture {
    let client: APIClient
    let namespace: String
    let folder: URL

    /// The server's record of one `GET /media/{bytes}` (`_stats` → `downloads.log`).
    struct ServedRequest: Decodable, Equatable {
        var range: String?
        var ifRange: String?
        var acceptEncoding: String?
        var status: Int
        var start: Int
        var bytesSent: Int
        var etag: String?
        var version: Int
        var dropped: Bool
    }

    static func start() throws -> DownloadFixture {
        let (client, namespace) = try TestServers.apiClient(namespace: TestServers.makeNamespace("dl"))
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dl-\(namespace)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return DownloadFixture(client: client, namespace: namespace, folder: folder)
    }

    /// `GET /media/{bytes}` with the server's variant parameters; retries mid-body after no wait.
    static func media(_ bytes: Int, _ query: [String: String] = [:], retries: Int = 2) -> Request<Void> {
        let policy = EndpointPolicy.standard.with(\.retry, RetryPolicy(maxRetries: retries, baseDelay: .zero, maxDelay: .zero))
        return Request<Void>.get(
            "/media/\(bytes)", query: Query(query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }),
            policy: policy)
    }

    func destination(_ name: String = "file.bin") -> URL { folder.appendingPathComponent(name) }

    /// What the server served in this namespace, oldest first.
    func served() async throws -> [ServedRequest] {
        let stats = try await TestServers.stats(namespace: namespace)
        let log = (stats["downloads"] as? [String: Any])?["log"] ?? []
        return try JSONDecoder().decode([ServedRequest].self, from: JSONSerialization.data(withJSONObject: log))
    }

    /// The files in the scratch folder, hidden ones included (a `.courier-downloads` left behind shows).
    func leftovers() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted()
    }

    func cleanUp() { try? FileManager.default.removeItem(at: folder) }

    /// Version `version` of a server file of `count` bytes: byte i is `(i + version) % 251`.
    static func content(_ count: Int, version: Int = 0) -> Data {
        let period = (0..<251).map { UInt8(($0 + version) % 251) }
        var data = Data(capacity: count + 251)
        while data.count < count { data.append(contentsOf: period) }
        return data.prefix(count)
    }

    /// Every progress value of `task`, collected until the sequence ends.
    static func collect(_ progress: AsyncStream<TransferProgress>) -> Task<[TransferProgress], Never> {
        Task {
            var values: [TransferProgress] = []
            for await value in progress { values.append(value) }
            return values
        }
    }
}

extension [TransferProgress] {
    /// `true` when `completedBytes` never decreases between values with the same `restarts`,
    /// and `restarts` never decreases.
    var isMonotone: Bool {
        zip(self, dropFirst()).allSatisfy { previous, next in
            next.restarts > previous.restarts
                || (next.restarts == previous.restarts && next.completedBytes >= previous.completedBytes)
        }
    }
}
