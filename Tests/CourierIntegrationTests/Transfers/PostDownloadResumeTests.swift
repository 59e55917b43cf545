import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTransfers

/// A download asked with `POST` (an export) without an idempotency key: the request may not be
/// repeated (RFC 9110 §9.2.2), so the downloader sends it only when the caller asks.
@Suite struct PostDownloadResumeTests {
    struct Served: Decodable {
        var method: String
        var range: String?
        var status: Int
    }

    static let size = 100_000
    static let drop = 30_000

    /// The caller resumes a `POST` download that broke off; the server answers its `Range` with a
    /// part from byte 0, which cannot continue the file. The resume ends with that failure: the
    /// server got the `POST` twice, once per call. The downloader used to start over on its own
    /// and send the `POST` a third time.
    @Test func aResumedPostWhosePartCannotContinueIsNotSentAgainFromZero() async throws {
        let fixture = try DownloadFixture.start()
        defer { fixture.cleanUp() }
        let endpoint = Request<Void>.post(
            "/media/\(Self.size)",
            query: Query([
                URLQueryItem(name: "dropAfter", value: "\(Self.drop)"), URLQueryItem(name: "rangeStart", value: "zero"),
            ]),
            policy: .standard.with(\.retry, RetryPolicy(maxRetries: 2, baseDelay: .zero, maxDelay: .zero)))
        let first = await fixture.client.download(endpoint, to: fixture.destination()).result
        guard case .failure(let error) = first, let resume = error.resumeData else {
            Issue.record("expected a resumable failure, got \(first)")
            return
        }
        let resumed = await fixture.client.download(endpoint, to: fixture.destination(), resumingFrom: resume).result
        let stats = try await TestServers.stats(namespace: fixture.namespace)
        let log = (stats["downloads"] as? [String: Any])?["log"] ?? []
        let served = try JSONDecoder().decode([Served].self, from: JSONSerialization.data(withJSONObject: log))
        #expect(served.map(\.method) == ["POST", "POST"], "\(served.map { "\($0.method) \($0.range ?? "-") \($0.status)" })")
        #expect(served.map(\.range) == [nil, "bytes=\(Self.drop)-"])
        guard case .failure(let failure) = resumed else {
            Issue.record("the resume succeeded after starting over")
            return
        }
        #expect(failure.reason.networkKind == .transport, "\(failure)")
        #expect(!FileManager.default.fileExists(atPath: fixture.destination().path))
    }
}
