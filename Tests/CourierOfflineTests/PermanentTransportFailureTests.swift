import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Testing
import Courier
import CourierTesting
@testable import CourierOffline

/// A transport failure that another try would repeat byte for byte (a response head over the
/// transports' limits: `URLError.cannotParseResponse`, ``ResponseHeadOverflow``) is a permanent
/// failure of the mutation: dead-lettered, and its group goes on. Connection-level failures stay
/// transient.
@Suite("Transport failures the queue cannot outwait")
struct PermanentTransportFailureTests {
    private static func heads(_ namespace: String) async throws -> Int {
        let (_, stats) = try await OfflineServer.control("GET", "/_stats", namespace: namespace)
        return (stats["hostile"] as? [String: Any])?["heads"] as? Int ?? 0
    }

    /// `POST /hostile/head` (TestServer/routes_hostile.py) answers with a 1 MiB header field line,
    /// over libcurl's limit under both transports on Linux. Measured before the fix, on both
    /// transports: the mutation stayed at the head of its group as transient (a `retrying` event,
    /// no dead letter), went out again on later flushes (more than one head counted) and the next
    /// mutation of the group was never sent.
    @Test(.timeLimit(.minutes(1)), arguments: OfflineTransport.allCases)
    func anUnreadableReplyIsDeadLetteredOnceAndTheGroupGoesOn(_ transport: OfflineTransport) async throws {
        let dir = try TemporaryDirectory()
        defer { dir.cleanup() }
        let namespace = OfflineServer.makeNamespace("permanent-transport")
        var configuration = MutationQueue.Configuration()
        configuration.sendsOnEnqueue = false
        configuration.backoff = Backoff(initialDelay: .milliseconds(1), maximumDelay: .milliseconds(1), jitter: .equal)
        let queue = try MutationQueue(
            path: dir.path("q.sqlite"),
            client: makeClient(try OfflineServer.environment(namespace: namespace), transport: transport),
            configuration: configuration)
        let recorder = await EventRecorder(queue)
        try await queue.enqueue(.json(id: "huge-head", method: .post, path: "/hostile/head", body: ["i": 1], group: "g"))
        try await queue.enqueue(.json(id: "next", method: .post, path: "/mutations", body: ["i": 2], group: "g"))
        var reports: [FlushReport] = []
        for _ in 0..<3 {
            reports.append(try await queue.flush())
            try await Task.sleep(for: .milliseconds(20))
        }
        // Sent once, not on every flush.
        #expect(try await Self.heads(namespace) == 1, "reports: \(reports)")
        // The next mutation of its group was delivered, once.
        #expect(try await OfflineServer.log(namespace: namespace).byKey["next"] == 1, "reports: \(reports)")
        #expect(try await queue.pendingCount() == 0)
        let letters = try await queue.deadLetters()
        #expect(letters.map(\.mutation.id) == ["huge-head"])
        #expect(letters.first?.statusCode == nil)
        #expect(letters.first?.reason.contains("\(URLError.Code.cannotParseResponse.rawValue)") == true, "\(letters)")
        // The app hears of it as of any permanent failure.
        let heard = await recorder.wait { events in
            events.contains { event in
                guard event.mutationID == "huge-head", case .deadLettered = event.outcome else { return false }
                return true
            }
        }
        #expect(heard)
        #expect(!recorder.events.contains { if case .retrying = $0.outcome { true } else { false } })
    }

    @Test("connection-level transport failures are transient; ones a retry repeats are permanent")
    func classification() {
        for code in [
            URLError.Code.networkConnectionLost, .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .timedOut,
            .notConnectedToInternet, .secureConnectionFailed, .unknown,
        ] {
            #expect(FailureClass.of(NetworkError.transport(URLError(code))) == .transient(retryAfter: nil), "\(code.rawValue)")
        }
        for code in [
            URLError.Code.cannotParseResponse, .badServerResponse, .badURL, .unsupportedURL, .httpTooManyRedirects,
            .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateHasUnknownRoot,
            .serverCertificateNotYetValid, .clientCertificateRejected,
        ] {
            #expect(FailureClass.of(NetworkError.transport(URLError(code))) == .permanent, "\(code.rawValue)")
        }
    }
}
