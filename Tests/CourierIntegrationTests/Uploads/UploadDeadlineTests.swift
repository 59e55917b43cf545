import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// The deadline of an upload is postponed by its progress (`EndpointPolicy.deadline`), on the
/// transport under test (`COURIER_TRANSPORT`): the reference server reads `/uploads/count` at a
/// fixed rate (`?rate=`, bytes per second) or stops reading (`?stall=`, bytes). The proof is the
/// server's count of requests and bytes.
@Suite("Uploads: progress postpones the deadline; a stall still times out", .timeLimit(.minutes(1)))
struct UploadDeadlineTests {
    /// The deadline of the stalled upload (``OnAQuietMachine``), on the wall clock.
    static let deadline = Duration.seconds(4)
    /// What the server reads per second on the slow path: 8 MiB/s, a slow uplink whose bytes
    /// keep moving.
    static let rate = 8 << 20
    /// The slow upload's body: 16 MiB, about 2 s at ``rate`` and many reports of bytes sent.
    /// (64 MiB, sent twice at once, outlasted the suite's minute while a build loaded the machine.)
    static let size = 16 << 20

    private static func count(_ body: RequestBody, query: Query) -> Request<CountedUpload> {
        UploadIntegrationTests.count(body, query: query).policy(UploadFixtures.policy.with(\.deadline, deadline))
    }

    private static func uploads(_ namespace: String) async throws -> [String: Any] {
        try #require(try await TestServers.stats(namespace: namespace)["uploads"] as? [String: Any])
    }

    /// The deadline of ``slowButMovingUploadCompletes(kind:)``, on the client's `TestClock`.
    static let movingDeadline = Duration.seconds(30)
    /// How far that test moves the client's clock at each report of body bytes sent.
    static let movingStep = Duration.seconds(5)

    /// An upload whose bytes keep moving outlives its deadline on the client's clock: a
    /// `TestClock` that the test moves by ``movingStep`` at each report of body bytes sent (the
    /// call notes the bytes for its deadline just before it reports them), so the call lasts
    /// many deadlines of its own time and only a report missing from the deadline could end it.
    /// On the wall clock (a 4 s deadline against the server's reads at 8 MiB/s) a loaded machine
    /// broke the test on both transports (`timedOut(nil)`): 4 s passed without a report, between
    /// reports or while the kernels' buffers drained after the last one. The deadline is long so the
    /// transports' own wall-clock backstop (1 s past it) stays out of reach of the tail.
    @Test(
        "a slow upload whose bytes keep moving outlives its deadline and completes, sent once",
        arguments: ["file", "data"])
    func slowButMovingUploadCompletes(kind: String) async throws {
        let clock = TestClock(mode: .manual)
        let (client, namespace) = try TestServers.apiClient(namespace: TestServers.makeNamespace("up")) {
            $0.interceptors = .standard(retry: RetryInterceptor(clock: TestClock()))
            $0.clock = clock
        }
        let data = UploadFixtures.bytes(Self.size, seed: 5)
        let url = try UploadFixtures.file(data)
        defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
        let body: RequestBody =
            kind == "file" ? .file(url) : .data(data, contentType: "application/octet-stream")
        let request = UploadIntegrationTests.count(body, query: ["rate": "\(Self.rate)"])
            .policy(UploadFixtures.policy.with(\.deadline, Self.movingDeadline))
        let reports = Locked(0)
        let reporter = TransferProgressReporter(sent: { _, _ in
            reports.withLock { $0 += 1 }
            clock.advance(by: Self.movingStep)
        })
        let context = RequestContext(for: request, traits: CallTraits(transferProgress: reporter))
        let result = try await client.response(for: request, context: context).value
        #expect(result.bytes == data.count)
        #expect(try await result.sha256 == UploadFixtures.sha256(file: url))
        #expect(
            clock.now.offset > Self.movingDeadline,
            "the upload lasted \(clock.now.offset) of its clock (\(reports.current) reports): it must outlive the deadline to prove anything"
        )
        let uploads = try await Self.uploads(namespace)
        #expect(uploads["attempts"] as? Int == 1, "sent once: \(uploads)")
        #expect(uploads["completed"] as? Int == 1)
        #expect(uploads["bytes"] as? Int == data.count)
    }
}

extension UploadDeadlineTests {
    /// "About a deadline later" is a wall-clock bound that the parallel passes' load broke (a
    /// fresh-clone run under a helper's build took 14 s for the 4 s deadline).
    @Suite("on a quiet machine") struct OnAQuietMachine {
        @Test("an upload the server stops reading fails with timedOut(nil) about a deadline later; nothing is resent")
        func stalledUploadTimesOut() async throws {
            let (client, namespace) = try UploadFixtures.client()
            let data = UploadFixtures.bytes(16 << 20, seed: 9)  // more than the socket buffers hold
            let url = try UploadFixtures.file(data)
            defer { try? FileManager.default.removeItem(at: url.deletingLastPathComponent()) }
            let stall = 256 << 10
            let start = ContinuousClock.now
            let error = await #expect(throws: NetworkError.self) {
                try await client.send(UploadDeadlineTests.count(.file(url), query: ["stall": "\(stall)"]))
            }
            let took = ContinuousClock.now - start
            guard case .timedOut(nil)? = error else {
                Issue.record("expected Courier's deadline, timedOut(nil): \(String(describing: error))")
                return
            }
            #expect(took >= UploadDeadlineTests.deadline, "failed after \(took), before its deadline")
            #expect(took < .seconds(10), "failed after \(took): a stall must end at about the deadline")
            // The transport sent nothing again: one request, and the server read only up to its stall.
            try await Task.sleep(for: .milliseconds(500))
            let uploads = try await UploadDeadlineTests.uploads(namespace)
            #expect(uploads["attempts"] as? Int == 1, "\(uploads)")
            #expect(uploads["completed"] as? Int == 0)
            #expect(uploads["perAttempt"] as? [Int] == [stall])
        }
    }
}
