import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``Transport`` backed by one long-lived `URLSession`.
///
/// Create one per client and keep it: a session owns the connection pool, so a session per request
/// throws away keep-alive and TLS resumption. By default the session uses an `.ephemeral`
/// configuration with `urlCache = nil` (Courier does HTTP caching itself — on Linux `URLCache`
/// stores nothing) and the configuration's own cookie storage, so no cookie of this client ever
/// reaches `HTTPCookieStorage.shared` or another client. Each connection of a long-lived stream
/// (``StreamingOptions/isLongLived``: Server-Sent Events feeds) goes through a session of its own
/// on the same configuration, so open feeds never hold the connections the other calls wait for.
///
/// Cancelling the calling task cancels the underlying `URLSessionTask` (surfacing as
/// `URLError(.cancelled)`). Total deadlines are not delegated to URLSession — on Linux
/// `timeoutIntervalForResource` is ignored — the client enforces them (see ``EndpointPolicy/deadline``).
public final class URLSessionTransport: Transport {
    /// The session every request goes through.
    public let session: URLSession
    /// What the session underneath can do (``TransportCapabilities/current`` unless a test injects another).
    package let capabilities: TransportCapabilities
    /// Bounds the requests that go out on connections of their own (see ``needsFreshConnection(_:capabilities:)``)
    /// to the session's `httpMaximumConnectionsPerHost` per origin, as its pool bounds the others.
    let freshConnections: PerOriginLimiter

    /// Creates a transport with a fresh session.
    ///
    /// - Parameter configuration: The session configuration; defaults to ``defaultConfiguration()``.
    ///
    /// The session gets Courier's delegate: URLSession follows no redirect (the client's redirect
    /// step does, RFC 9110 §15.4, keeping credentials on their origin) and answers every HTTP
    /// authentication challenge without a credential, so a 401 comes back as a response at once.
    public convenience init(configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration()) {
        self.init(configuration: configuration, capabilities: .current)
    }

    /// Creates a transport that presents a client certificate (mutual TLS) to the hosts that ask.
    ///
    /// On Apple platforms the session's delegate answers `NSURLAuthenticationMethodClientCertificate`
    /// challenges from a host in `clientIdentities` with a `URLCredential` holding the identity's
    /// `SecIdentity` (PKCS#12 identities; a PEM identity, or an archive that cannot be read, fails
    /// the call with `URLError(.clientCertificateRejected)`). URLSession on Linux cannot present a
    /// client certificate: a request to a host in `clientIdentities` fails there with
    /// `URLError(.clientCertificateRequired)` before it is sent (use `CurlTransport`).
    ///
    /// ```swift
    /// let identity = ClientIdentity.pkcs12(try Data(contentsOf: URL(fileURLWithPath: "client.p12")), passphrase: "secret")
    /// let transport = URLSessionTransport(clientIdentities: ["api.example.com": identity])
    /// ```
    ///
    /// - Parameters:
    ///   - configuration: The session configuration; defaults to ``defaultConfiguration()``.
    ///   - clientIdentities: The identity of each host, keyed by host name (case-insensitive).
    public convenience init(
        configuration: URLSessionConfiguration = URLSessionTransport.defaultConfiguration(),
        clientIdentities: [String: ClientIdentity]
    ) {
        self.init(configuration: configuration, capabilities: .current, clientIdentities: clientIdentities)
    }

    /// Creates a transport with a fresh session whose delegate acts on `capabilities` (tests run
    /// one platform's branches on another), checks trust with `serverTrust` and answers
    /// client-certificate challenges with `clientCertificates`.
    package init(
        configuration: URLSessionConfiguration, capabilities: TransportCapabilities,
        serverTrust: any ServerTrustEvaluator = PlatformAdapters.serverTrust,
        clientCertificates: any ClientCertificateProvider = PlatformAdapters.clientCertificates,
        clientIdentities: [String: ClientIdentity] = [:]
    ) {
        var identities: [String: ClientIdentity] = [:]
        for (host, identity) in clientIdentities { identities[HostPins.normalise(host)] = identity }
        let delegate = TransportSessionDelegate(
            capabilities: capabilities, serverTrust: serverTrust, clientCertificates: clientCertificates,
            clientIdentities: identities)
        self.session = URLSession(
            configuration: configuration, delegate: delegate, delegateQueue: Self.delegateQueue(for: capabilities))
        self.capabilities = capabilities
        self.freshConnections = PerOriginLimiter(limit: configuration.httpMaximumConnectionsPerHost)
    }

    /// The delegate queue of Courier's sessions: a ``BoundedDelegateQueue`` where
    /// ``TransportCapabilities/boundsDelegateQueue`` (Linux), else URLSession's own serial queue.
    static func delegateQueue(for capabilities: TransportCapabilities) -> OperationQueue? {
        capabilities.boundsDelegateQueue ? BoundedDelegateQueue() : nil
    }

    /// Wraps an existing session (for example one whose configuration installs a `URLProtocol` stub).
    /// Its delegate is the caller's: when it lets URLSession follow redirects, the client's redirect
    /// step never sees them, so the delegate must keep credentials on their origin itself; on
    /// Linux a delegate that does not answer authentication challenges leaves a 401 with a `Basic`
    /// challenge hanging until the deadline; and Courier's per-task behaviour (upload progress,
    /// task metrics, pinning, streaming, a connection of its own for unsafe requests on Linux)
    /// needs Courier's delegate, so such a session gets none of it.
    public convenience init(session: URLSession) {
        self.init(session: session, capabilities: .current)
    }

    /// Wraps an existing session whose URLSession can do what `capabilities` says.
    package init(session: URLSession, capabilities: TransportCapabilities) {
        self.session = session
        self.capabilities = capabilities
        self.freshConnections = PerOriginLimiter(limit: session.configuration.httpMaximumConnectionsPerHost)
    }

    deinit {
        session.finishTasksAndInvalidate()
    }

    /// The configuration Courier uses unless told otherwise: `.ephemeral`, `urlCache = nil`,
    /// `requestCachePolicy = .reloadIgnoringLocalCacheData`, cookies accepted into the
    /// configuration's private storage, 60 s idle timeout per request. On Linux,
    /// `httpMaximumConnectionsPerHost` is 4 (URLSession's default is 6): FoundationNetworking's
    /// libcurl keeps only 4 idle connections per request in flight, so with 6 a client that is
    /// busy between requests keeps closing and opening connections (see <doc:PlatformDifferences>).
    public static func defaultConfiguration() -> URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        if let floor = TransportCapabilities.current.idleConnectionFloor {
            configuration.httpMaximumConnectionsPerHost = min(configuration.httpMaximumConnectionsPerHost, floor)
        }
        configuration.urlCache = nil
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.httpCookieAcceptPolicy = .always
        configuration.httpShouldSetCookies = true
        configuration.timeoutIntervalForRequest = 60
        return configuration
    }

    /// The cookie store private to this transport's session, if the configuration has one.
    public var cookieStorage: HTTPCookieStorage? { session.configuration.httpCookieStorage }

    /// Courier's delegate of the session, `nil` for a session wrapped with ``init(session:)``
    /// whose delegate is the caller's.
    var courierDelegate: TransportSessionDelegate? { session.delegate as? TransportSessionDelegate }

    /// Sends `request` as a data task run by Courier's session delegate.
    ///
    /// A 3xx is returned as is (the client's redirect step follows it) when the session has
    /// Courier's delegate.
    ///
    /// - Throws: `URLError` for network failures, including `.cancelled` when the calling task is
    ///   cancelled; `URLError(.badServerResponse)` when the response is not HTTP;
    ///   ``NetworkError/invalidRequest(_:)`` before anything is sent for a URL or header fields
    ///   over 64 KiB (the limits CurlTransport keeps too).
    public func send(_ request: URLRequest) async throws -> HTTPResponse {
        try await send(request, pinning: nil)
    }

    /// ``send(_:)`` whose server-trust challenges must pass `pinning` (see ``PinningTransport``).
    package func send(_ request: URLRequest, pinning: PinningPolicy?) async throws -> HTTPResponse {
        try Task.checkCancellation()
        try RequestHeadLimits.check(request)
        try refuseUnpresentableIdentity(request)
        let request = Self.wireRequest(request, capabilities: capabilities)
        guard let delegate = courierDelegate else { return try await sendThroughForeignDelegate(request) }
        // Courier's own session: the delegate collects the response, so a 401 whose challenge
        // it refused still comes back (see TransportSessionDelegate).
        if Self.needsFreshConnection(request, capabilities: capabilities) {
            // A session per request has a pool of its own: without a slot per origin, a burst of
            // such requests opened a connection each at once (200 POSTs, 200 connections).
            return try await freshConnections.withSlot(for: request.url) {
                let (oneShot, fresh) = freshSession(like: delegate)
                defer { oneShot.finishTasksAndInvalidate() }
                return try await fresh.run(request, in: oneShot, pinning: pinning)
            }
        }
        return try await delegate.run(request, in: session, pinning: pinning)
    }

    /// Sends through a session whose delegate is not Courier's, with `URLSession.data(for:)`.
    private func sendThroughForeignDelegate(_ request: URLRequest) async throws -> HTTPResponse {
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch let error as URLError {
            throw Self.mappedFailure(error)
        }
        guard let http = response as? HTTPURLResponse else {
            throw URLError(.badServerResponse)
        }
        return HTTPResponse(http, body: data)
    }

    /// Sends `request` as a data task whose body is handed over chunk by chunk as it arrives
    /// (see ``Transport/stream(_:options:)``). `options.idleTimeout` becomes the request's
    /// `timeoutInterval` (URLSession's idle timeout on every platform).
    ///
    /// On Apple platforms a consumer that falls `options.bufferLimit` bytes behind suspends the
    /// task until it catches up; on Linux, where suspending re-sends the request, it gets
    /// ``NetworkError/streamBufferOverflow(limit:)`` instead. A session created with
    /// ``init(session:)`` whose delegate is not Courier's falls back to the buffered ``send(_:)``.
    ///
    /// - Throws: As ``send(_:)``, until the head arrived.
    public func stream(_ request: URLRequest, options: StreamingOptions) async throws -> HTTPResponse {
        try await stream(request, options: options, pinning: nil)
    }

    /// ``stream(_:options:)`` whose server-trust challenges must pass `pinning` (see ``PinningTransport``).
    package func stream(
        _ request: URLRequest, options: StreamingOptions, pinning: PinningPolicy?
    ) async throws -> HTTPResponse {
        try Task.checkCancellation()
        try RequestHeadLimits.check(request)
        try refuseUnpresentableIdentity(request)
        guard let delegate = courierDelegate else { return try await send(request) }
        var request = Self.wireRequest(request, capabilities: capabilities)
        // Courier's own idle timer (APIClient.stream) is exact; the session's, in whole seconds on
        // Linux, is only a later backstop for callers of the transport itself.
        request.timeoutInterval = TimeInterval(IdleTimer.backstop(for: options.idleTimeout).components.seconds)
        if options.isLongLived || Self.needsFreshConnection(request, capabilities: capabilities) {
            let (oneShot, fresh) = freshSession(like: delegate)
            defer { oneShot.finishTasksAndInvalidate() }  // the task runs on until its body ends
            return try await fresh.stream(
                await TaskControl.dataTask(in: oneShot, with: request), options: options, pinning: pinning)
        }
        let task = await TaskControl.dataTask(in: session, with: request)
        return try await delegate.stream(task, options: options, pinning: pinning)
    }

    /// Whether `request` must go out on a connection of its own
    /// (``TransportCapabilities/resendsOnReusedConnections``: Linux).
    ///
    /// libcurl under FoundationNetworking repeats a request whose reused, kept-alive connection
    /// died after the request went out and before any answer, and FoundationNetworking tells
    /// libcurl the body was rewound when it was not: measured, the copy of a `Data` or stream
    /// body arrived with its headers and no body bytes (or an empty chunked body), and a bodiless
    /// `POST` arrived twice. No per-request option turns the repeat off, but libcurl repeats only
    /// on a reused connection. So a request with a body, and
    /// every request that may not be repeated (``TransportResendRule``, e.g. a bodiless `POST`),
    /// goes through a one-request session, whose connection is new: sent at most once, never
    /// empty or cut; a lost connection surfaces as `URLError(.networkConnectionLost)`. Bodiless
    /// idempotent requests (`GET`, `HEAD`, `DELETE`) keep the shared pool: repeating them is safe.
    /// At most `httpMaximumConnectionsPerHost` buffered requests (``send(_:)``) go out this way at
    /// once per origin; the others wait in Courier (``PerOriginLimiter``), where a call cancelled
    /// or out of time sends nothing. Streamed responses are not counted.
    static func needsFreshConnection(_ request: URLRequest, capabilities: TransportCapabilities) -> Bool {
        guard capabilities.resendsOnReusedConnections else { return false }
        return request.httpBody != nil || request.httpBodyStream != nil || !TransportResendRule.allowsResend(request)
    }

    /// `request` as the platform's URLSession can send it. Where a body stream always goes
    /// chunked (``TransportCapabilities/sendsStreamLength`` is `false`: Linux), a `Content-Length`
    /// Courier set for a stream of known length is removed (RFC 9112 §6.3 forbids both). Servers
    /// that require a length (411) need `CurlTransport` or a `Data` body on Linux.
    static func wireRequest(_ request: URLRequest, capabilities: TransportCapabilities) -> URLRequest {
        guard !capabilities.sendsStreamLength, request.httpBodyStream != nil,
            request.value(forHTTPHeaderField: "Content-Length") != nil
        else { return request }
        var request = request
        request.setValue(nil, forHTTPHeaderField: "Content-Length")
        return request
    }

    /// A session for one request: this transport's configuration (cookie storage included) and
    /// a Courier delegate of its own acting like `delegate`, so its connection pool starts empty.
    private func freshSession(like delegate: TransportSessionDelegate) -> (URLSession, TransportSessionDelegate) {
        makeSession(like: delegate, configuration: session.configuration)
    }

    /// A session on `configuration` with a Courier delegate of its own acting like `delegate`.
    private func makeSession(
        like delegate: TransportSessionDelegate, configuration: URLSessionConfiguration
    ) -> (session: URLSession, delegate: TransportSessionDelegate) {
        let fresh = TransportSessionDelegate(
            capabilities: delegate.capabilities, serverTrust: delegate.serverTrust,
            clientCertificates: delegate.clientCertificates, clientIdentities: delegate.clientIdentities)
        let queue = Self.delegateQueue(for: delegate.capabilities)
        return (URLSession(configuration: configuration, delegate: fresh, delegateQueue: queue), fresh)
    }

    /// Fails a request to a host with a ``ClientIdentity`` where URLSession cannot present one
    /// (``TransportCapabilities/presentsClientCertificates`` is `false`: Linux), instead of letting
    /// the server refuse the TLS handshake with a vaguer error.
    ///
    /// - Throws: `URLError(.clientCertificateRequired)`.
    func refuseUnpresentableIdentity(_ request: URLRequest) throws {
        // Most transports have no identity: then neither the URL's host nor its normal form is
        // worked out (a perf profile of a GET over URLSession on Linux put them at 8-9 µs per call).
        guard !capabilities.presentsClientCertificates, let delegate = courierDelegate,
            !delegate.clientIdentities.isEmpty, let host = request.url?.host,
            delegate.clientIdentities[HostPins.normalise(host)] != nil
        else { return }
        throw URLError(
            .clientCertificateRequired,
            userInfo: [
                NSLocalizedDescriptionKey:
                    "URLSession on this platform (FoundationNetworking) cannot present a client certificate to \(host); use CurlTransport",
                NSURLErrorFailingURLErrorKey: request.url as Any,
            ])
    }
}
