import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
import CourierTransfers

/// A download's later requests (the rest of a body that broke off) go out under the sign-in of its
/// first: bytes of another user's file must never complete this user's download.
@Suite("Downloads: one sign-in per download", .timeLimit(.minutes(1)))
struct DownloadSignInTests {
    /// Alice's download breaks off after 64 KiB; while it waits to continue, Alice signs out and
    /// Bob signs in. The continuation must not go out with Bob's token: the download fails as
    /// signed out. It used to fetch the rest as Bob and complete Alice's file with it.
    @Test func theRestOfABodyIsNeverFetchedUnderAnotherSignIn() async throws {
        let session = try await SignInSwitch.start("dl-signin")
        let (client, clock, namespace) = (session.client, session.clock, session.namespace)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dl-\(namespace)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let size = 1 << 20
        let retry = RetryPolicy(maxRetries: 2, baseDelay: .seconds(1), maxDelay: .seconds(1), jitter: .none)
        let request = Request<Void>.get(
            "/media/\(size)", query: ["dropAfter": "65536"],
            policy: EndpointPolicy.authorizedRead.with(\.retry, retry))
        let task = client.download(request, to: folder.appendingPathComponent("file.bin"))
        // The body broke off and the download waits its backoff (1 s on the manual clock, begun
        // now). The clock is the client's too: its deadline timer sleeps on it and must not count.
        try await clock.waitForSleeper(for: .seconds(1))
        try await session.switchToBob(thenAdvanceBy: .seconds(1))

        let failure = await #expect(throws: DownloadError.self) { _ = try await task.value }
        if case .network(let error) = failure?.reason {
            #expect(error.kind == .signedOut, "\(error)")
        } else {
            Issue.record("expected signed out, got \(String(describing: failure))")
        }
        let sent = try await TestServers.requestLog(namespace: namespace, path: "/media/\(size)")
        #expect(sent.count == 1, "the rest went out under Bob's sign-in: \(sent.map { $0.header("Range") })")
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("file.bin").path))
    }
}
