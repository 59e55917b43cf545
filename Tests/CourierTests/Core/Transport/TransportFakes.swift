import Foundation
import Testing

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A stand-in for a `URLSessionTask` that records the commands the session delegate gives it.
/// Like URLSession, a cancel completes the task through its delegate with `URLError(.cancelled)`.
final class FakeTransportTask: TransportTask {
    let taskIdentifier: Int
    private let delegate: TransportSessionDelegate
    private let log = Locked<[String]>([])

    init(_ id: Int, in delegate: TransportSessionDelegate) {
        self.taskIdentifier = id
        self.delegate = delegate
    }

    func resume() { log.withLock { $0.append("resume") } }
    func suspend() { log.withLock { $0.append("suspend") } }
    func cancel() {
        log.withLock { $0.append("cancel") }
        delegate.complete(taskIdentifier, error: URLError(.cancelled), response: nil)
    }

    /// The commands received so far, in order.
    var commands: [String] { log.current }

    /// Waits (at most 5 s) until the task has received `command` (TaskControl sends start and
    /// cancel from a queue of its own).
    func waitFor(_ command: String) async throws {
        for _ in 0..<500 {
            if commands.contains(command) { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("\(command) never arrived; commands: \(commands)")
    }
}

/// Builders shared by the capability tests.
enum TransportFixtures {
    static let url = URL(string: "https://api.example.com/items")

    static func response(_ status: Int, headers: [String: String] = [:]) throws -> HTTPURLResponse {
        let url = try #require(url)
        return try #require(HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: headers))
    }

    /// `capabilities` of one platform with one field changed.
    static func capabilities(
        _ base: TransportCapabilities, _ change: (inout TransportCapabilities) -> Void
    ) -> TransportCapabilities {
        var value = base
        change(&value)
        return value
    }

    static func policy() throws -> PinningPolicy {
        try PinningPolicy(pins: [
            "api.example.com": [
                "n9wAWgmBsYfvyXPWyaIAuryh55GSNUvmk3qvvDcFFaM=", "mt6CLBG7Uu5u3sdtY83KB03FYUxMEaEHh0q+IJmBHbo=",
            ]
        ])
    }

    /// An HTTP `Basic` challenge that came with `failure`.
    static func basicChallenge(failure: HTTPURLResponse?) -> URLAuthenticationChallenge {
        let space = URLProtectionSpace(
            host: "api.example.com", port: 443, protocol: "https", realm: "api",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        return URLAuthenticationChallenge(
            protectionSpace: space, proposedCredential: nil, previousFailureCount: 0, failureResponse: failure, error: nil,
            sender: ChallengeSender())
    }
}

/// A challenge sender that does nothing (URLSession's completion handler is what answers).
final class ChallengeSender: NSObject, URLAuthenticationChallengeSender {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}

/// A trust evaluator that treats every challenge of a pinned task as a server-trust challenge and
/// refuses or accepts it, as Apple's `SecTrustEvaluator` would for a bad or good chain.
struct FakeServerTrust: ServerTrustEvaluator {
    let accepts: Bool

    func decision(for challenge: URLAuthenticationChallenge, policy: PinningPolicy?) -> ServerTrustDecision? {
        guard let policy else { return nil }
        guard policy.enforces(host: challenge.protectionSpace.host) else { return .defaultHandling }
        if accepts { return .trusted(URLCredential(user: "trust", password: "", persistence: .none)) }
        return .refused(.pinMismatch(host: challenge.protectionSpace.host, presented: ["AAAA"]))
    }
}
