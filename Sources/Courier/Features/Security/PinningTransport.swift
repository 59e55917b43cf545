import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``Transport`` that enforces a ``PinningPolicy`` on top of a ``URLSessionTransport``.
///
/// **Where URLSession raises server-trust challenges** (Apple platforms,
/// `TransportCapabilities.raisesServerTrustChallenges`): every request goes through the base
/// session with its pins registered for its task; Courier's session delegate answers the
/// server-trust challenge — first normal system trust (`SecTrustEvaluateWithError`), then the pins
/// of the challenged host against every key in the chain. A mismatch cancels the connection before
/// any request byte is sent and surfaces as ``NetworkError/transport(_:)`` with a `URLError` whose
/// ``Foundation/URLError/pinningFailure`` says why (not as a cancellation). Redirects to a pinned
/// host are checked the same way (the client's redirect step sends them through this transport).
/// The base session must have Courier's delegate (a plain ``URLSessionTransport``); a session
/// wrapped with ``URLSessionTransport/init(session:)`` cannot check pins, and requests to pinned
/// hosts are refused with ``PinningFailure/trustHandledElsewhere(host:)``.
///
/// **Linux**: URLSession gives no server-trust hook, so pins cannot be checked. Requests to a
/// pinned host fail closed with ``PinningFailure/unsupportedPlatform(host:)`` without touching the
/// network, and a response redirected onto a pinned host is refused too. Unpinned hosts work
/// normally. (``PinningPolicy/bypassesInDebugBuilds`` lifts this in debug builds.)
///
/// On every platform a plain `http` request to a pinned host is refused
/// (``PinningFailure/insecureScheme(host:)``).
///
/// ```swift
/// let transport = PinningTransport(policy: try PinningPolicy(pins: ["api.example.com": [current, backup]]))
/// let client = APIClient(environment: .production) { $0.transport = transport }
/// ```
public final class PinningTransport: Transport {
    /// The pins enforced.
    package let policy: PinningPolicy
    /// The transport that sends requests (and owns the session and its cookie storage).
    package let base: URLSessionTransport

    /// Creates a pinning transport.
    ///
    /// - Parameters:
    ///   - policy: The pinned hosts.
    ///   - base: The transport to send through; a fresh ``URLSessionTransport`` by default.
    public init(policy: PinningPolicy, base: URLSessionTransport = URLSessionTransport()) {
        self.policy = policy
        self.base = base
    }

    /// Streams `request` (see ``URLSessionTransport/stream(_:options:)``), enforcing the pins of
    /// its host exactly as ``send(_:)`` does.
    ///
    /// - Throws: A `URLError` carrying a ``PinningFailure`` when pins refuse the connection;
    ///   otherwise whatever the base transport throws.
    public func stream(_ request: URLRequest, options: StreamingOptions) async throws -> HTTPResponse {
        let host = try checkedHost(request)
        guard base.capabilities.raisesServerTrustChallenges else {
            return try checkedRedirect(await base.stream(request, options: options), from: host)
        }
        return try await base.stream(request, options: options, pinning: policy)
    }

    /// Sends `request`, enforcing the pins of its host.
    ///
    /// - Throws: A `URLError` carrying a ``PinningFailure`` when pins refuse the connection;
    ///   otherwise whatever the base transport throws.
    public func send(_ request: URLRequest) async throws -> HTTPResponse {
        let host = try checkedHost(request)
        guard base.capabilities.raisesServerTrustChallenges else {
            return try checkedRedirect(await base.send(request), from: host)
        }
        return try await base.send(request, pinning: policy)
    }

    /// The request's host, after refusing what can never be checked: a pinned host over plain
    /// HTTP, on a session that raises no server-trust challenge, or on a session whose delegate is
    /// not Courier's (which would answer trust itself, or not at all).
    private func checkedHost(_ request: URLRequest) throws -> String {
        try Task.checkCancellation()
        let host = request.url?.host ?? ""
        guard policy.enforces(host: host) else { return host }
        let name = HostPins.normalise(host)
        if request.url?.scheme?.lowercased() != "https" { throw PinningFailure.insecureScheme(host: name).urlError }
        if !base.capabilities.raisesServerTrustChallenges { throw PinningFailure.unsupportedPlatform(host: name).urlError }
        if base.courierDelegate == nil { throw PinningFailure.trustHandledElsewhere(host: name).urlError }
        return host
    }

    /// `response`, unless it came from a pinned host other than `host` (a redirect URLSession
    /// followed itself) on a session that cannot check pins.
    private func checkedRedirect(_ response: HTTPResponse, from host: String) throws -> HTTPResponse {
        if let finalHost = response.url?.host, HostPins.normalise(finalHost) != HostPins.normalise(host),
            policy.enforces(host: finalHost)
        {
            throw PinningFailure.unsupportedPlatform(host: HostPins.normalise(finalHost)).urlError
        }
        return response
    }
}

extension PinningTransport: SessionResettable {
    /// Resets the base transport's session: cookies, credentials, connections.
    public func resetSession() async {
        await base.resetSession()
    }

    /// ``SessionResetStage/connections``.
    public var sessionResetStage: SessionResetStage { .connections }

    /// The base transport's URLSession and cookie storage.
    public var sessionStateIdentities: [SessionStateIdentity] { base.sessionStateIdentities }
}
