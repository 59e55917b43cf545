import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``Transport`` that enforces a ``PinningPolicy`` on top of a ``URLSessionTransport``.
///
/// **Apple platforms**: every request goes through the base session with a per-task delegate that
/// answers the server-trust challenge — first normal system trust (`SecTrustEvaluateWithError`),
/// then the pins of the challenged host against every key in the chain. A mismatch cancels the
/// connection before any request byte is sent and surfaces as ``NetworkError/transport(_:)`` with
/// a `URLError` whose ``Foundation/URLError/pinningFailure`` says why (not as a cancellation).
/// Redirects to a pinned host are checked the same way. The base session must not answer
/// session-level trust challenges itself (a plain ``URLSessionTransport`` does not); if it does,
/// requests to pinned hosts are refused with ``PinningFailure/trustHandledElsewhere(host:)``.
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
        #if canImport(Darwin)
        _ = try checkedPins(request)
        let delegate = PinningTaskDelegate(policy: policy, timings: nil)
        do {
            return try await base.stream(request, options: options, taskDelegate: delegate)
        } catch {
            if let failure = delegate.failure { throw failure.urlError }
            throw error
        }
        #else
        let (host, pinned) = try checkedPins(request)
        if pinned { throw PinningFailure.unsupportedPlatform(host: HostPins.normalise(host)).urlError }
        return try await base.stream(request, options: options)
        #endif
    }

    /// The request's host and whether it is pinned, after refusing what can never be checked: a
    /// pinned host over plain HTTP, or (Apple) a session whose own delegate answers trust.
    private func checkedPins(_ request: URLRequest) throws -> (host: String, pinned: Bool) {
        try Task.checkCancellation()
        let host = request.url?.host ?? ""
        let pinned = !policy.isBypassed && policy.pins(for: host) != nil
        if pinned, request.url?.scheme?.lowercased() != "https" {
            throw PinningFailure.insecureScheme(host: HostPins.normalise(host)).urlError
        }
        #if canImport(Darwin)
        if pinned, sessionHandlesTrustItself {
            throw PinningFailure.trustHandledElsewhere(host: HostPins.normalise(host)).urlError
        }
        #endif
        return (host, pinned)
    }

    /// Sends `request`, enforcing the pins of its host.
    ///
    /// - Throws: A `URLError` carrying a ``PinningFailure`` when pins refuse the connection;
    ///   otherwise whatever the base transport throws.
    public func send(_ request: URLRequest) async throws -> HTTPResponse {
        #if canImport(Darwin)
        _ = try checkedPins(request)
        let delegate = PinningTaskDelegate(policy: policy, timings: TaskTimingsReporter.current)
        do {
            let (data, response) = try await base.session.data(for: request, delegate: delegate)
            guard let http = response as? HTTPURLResponse else { throw URLError(.badServerResponse) }
            return HTTPResponse(statusCode: http.statusCode, headers: HTTPHeaders(http), body: data, url: http.url)
        } catch {
            // Cancelling the challenge surfaces as URLError.cancelled; report the real reason.
            if let failure = delegate.failure { throw failure.urlError }
            throw error
        }
        #else
        let (host, pinned) = try checkedPins(request)
        if pinned { throw PinningFailure.unsupportedPlatform(host: HostPins.normalise(host)).urlError }
        let response = try await base.send(request)
        if let finalHost = response.url?.host, HostPins.normalise(finalHost) != HostPins.normalise(host),
            !policy.isBypassed, policy.pins(for: finalHost) != nil
        {
            throw PinningFailure.unsupportedPlatform(host: HostPins.normalise(finalHost)).urlError
        }
        return response
        #endif
    }

    #if canImport(Darwin)
    /// Whether the base session's own delegate answers session-level challenges — then URLSession
    /// never asks the per-task delegate, and pins could not be enforced.
    private var sessionHandlesTrustItself: Bool {
        guard let delegate = base.session.delegate else { return false }
        return delegate.responds(to: #selector(URLSessionDelegate.urlSession(_:didReceive:completionHandler:)))
    }
    #endif
}

extension PinningTransport: SessionResettable {
    /// Resets the base transport's session: cookies, credentials, connections.
    public func resetSession() async {
        await base.resetSession()
    }
}
